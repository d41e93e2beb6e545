"""The booking agent's tools, backed by the example's data files (no network).

Each function is one tool of ``booking_tools.json``; seatrial.yaml names them under
``implementations`` (``python:tools/booking_tools.py:search_flights`` ...). They never change
the data files: a booking or a cancellation answers as if it happened, so every attempt starts
from the same orders and runs in any order.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from seatrial.agent import ToolError

DATA = Path(__file__).resolve().parent.parent / "data"
CABINS = ("economy", "business")
CABIN_NAMES = {"economy": "经济舱", "business": "公务舱"}
# Share of the fare refunded when the passenger changes plans; the airline's cancellation
# refunds all of it.
REFUND_SHARE = {"economy": 0.8, "business": 0.9}


@cache
def _table(name: str) -> tuple[dict[str, Any], ...]:
    rows = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return tuple(rows)


def _need(tool: str, **values: Any) -> None:
    missing = [name for name, value in values.items() if value in (None, "")]
    if missing:
        raise ToolError(
            f"{tool}: 缺少必填参数 {', '.join(missing)} (missing required parameter)",
            "invalid_arguments",
        )


def _cabin(tool: str, cabin: str | None) -> None:
    if cabin is not None and cabin not in CABINS:
        raise ToolError(
            f"{tool}: 舱位 cabin={cabin!r} 无效，只能是 economy 或 business", "invalid_arguments"
        )


def _order(order_id: str) -> dict[str, Any]:
    for order in _table("orders"):
        if order["order_id"] == order_id.strip().upper():
            return dict(order)
    raise ToolError(f"订单 {order_id} 不存在，请核对订单号 (order not found)", "not_found")


def search_flights(
    origin: str | None = None,
    destination: str | None = None,
    date: str | None = None,
    cabin: str | None = None,
) -> dict[str, Any]:
    """Flights between two cities on a day, with price and seats left per cabin."""
    _need("search_flights", origin=origin, destination=destination, date=date)
    _cabin("search_flights", cabin)
    cities = sorted(
        {f["origin"] for f in _table("flights")} | {f["destination"] for f in _table("flights")}
    )
    for city in (origin, destination):
        if city not in cities:
            raise ToolError(
                f"search_flights: 不支持的城市 {city!r}，可选：{'、'.join(cities)}",
                "invalid_arguments",
            )
    wanted = [cabin] if cabin else list(CABINS)
    flights = [
        {
            "flight_no": f["flight_no"],
            "depart": f["depart"],
            "arrive": f["arrive"],
            "cabins": {
                c: {"price": f["prices"][c], "seats_left": f["seats_left"][c]} for c in wanted
            },
        }
        for f in _table("flights")
        if (f["origin"], f["destination"], f["date"]) == (origin, destination, date)
    ]
    return {"origin": origin, "destination": destination, "date": date, "flights": flights}


def book_ticket(
    flight_no: str | None = None,
    date: str | None = None,
    cabin: str | None = None,
    passenger_name: str | None = None,
) -> dict[str, Any]:
    """Book one seat and issue the ticket; the order id is derived from the booking."""
    _need("book_ticket", flight_no=flight_no, date=date, cabin=cabin, passenger_name=passenger_name)
    _cabin("book_ticket", cabin)
    assert flight_no is not None and date is not None and cabin is not None
    flight = next(
        (f for f in _table("flights") if (f["flight_no"], f["date"]) == (flight_no.upper(), date)),
        None,
    )
    if flight is None:
        raise ToolError(f"book_ticket: {date} 没有航班 {flight_no}，请先查询航班", "not_found")
    if flight["seats_left"][cabin] <= 0:
        raise ToolError(
            f"book_ticket: {flight_no} {date} {CABIN_NAMES[cabin]}已售罄，请换舱位或航班",
            "sold_out",
        )
    digest = hashlib.sha256(f"{flight_no}|{date}|{cabin}|{passenger_name}".encode()).hexdigest()
    order_id = f"BK{date.replace('-', '')}{int(digest, 16) % 900 + 100}"
    return {
        "order_id": order_id,
        "status": "已出票",
        "flight_no": flight["flight_no"],
        "date": date,
        "depart": flight["depart"],
        "cabin": cabin,
        "passenger_name": passenger_name,
        "price": flight["prices"][cabin],
    }


def get_order(order_id: str | None = None) -> dict[str, Any]:
    """An order by its id."""
    _need("get_order", order_id=order_id)
    assert order_id is not None
    return _order(order_id)


def cancel_order(order_id: str | None = None, reason: str | None = None) -> dict[str, Any]:
    """Cancel an issued, unused order; the fare is refunded by the change-of-plans rule."""
    _need("cancel_order", order_id=order_id, reason=reason)
    assert order_id is not None
    if reason not in ("schedule_change", "duplicate", "other"):
        raise ToolError(
            f"cancel_order: 取消原因 reason={reason!r} 无效，"
            "只能是 schedule_change、duplicate、other",
            "invalid_arguments",
        )
    order = _order(order_id)
    if order["status"] != "已出票":
        raise ToolError(
            f"cancel_order: 订单 {order['order_id']} 状态为{order['status']}，不能取消",
            "not_allowed",
        )
    refund = round(order["price"] * REFUND_SHARE[order["cabin"]])
    return {"order_id": order["order_id"], "status": "已取消", "refund_amount": refund}


def request_refund(order_id: str | None = None, reason: str | None = None) -> dict[str, Any]:
    """Ask for a refund: all of the fare when the airline cancelled the flight, else the
    change-of-plans share; a used ticket is not refunded."""
    _need("request_refund", order_id=order_id, reason=reason)
    assert order_id is not None
    reasons = ("flight_cancelled", "schedule_change", "illness", "other")
    if reason not in reasons:
        raise ToolError(
            f"request_refund: 退款原因 reason={reason!r} 无效，只能是 {'、'.join(reasons)}",
            "invalid_arguments",
        )
    order = _order(order_id)
    if order["status"] == "已使用":
        raise ToolError(f"request_refund: 订单 {order['order_id']} 已使用，不能退款", "not_allowed")
    cancelled = order["status"] == "航班已取消"
    if reason == "flight_cancelled" and not cancelled:
        raise ToolError(
            f"request_refund: 航班 {order['flight_no']} 没有取消，请选择其他退款原因",
            "invalid_arguments",
        )
    share = 1.0 if cancelled else REFUND_SHARE[order["cabin"]]
    return {
        "order_id": order["order_id"],
        "status": "退款处理中",
        "refund_amount": round(order["price"] * share),
        "arrives_in": "3-7个工作日",
    }
