"""A scripted booking model for the example suite (examples/booking), served by FakeOpenAI.

It reads the conversation the way a small, rule-following model would: intent and values from
the user's messages, a summary from each tool result, a repaired call after a tool error. Two
flaws are on purpose, so the example's cases pass and fail for known reasons:

- it books a ticket without asking the passenger's name (``ask-for-passenger-name`` fails);
- after a failed ``request_refund`` it sends the identical call again
  (``refund-missing-parameter`` fails ``no_identical_retry``).

A message written by ``seatrial contract`` ("Please use `TOOL` ... with a = 1, b = "x".") is
obeyed as written; after a fault the model reads an "allowed values" error and picks an
allowed value, and sends the call it sees in the conversation again after any other error:
the right repair after a transient fault, the wrong one after ``missing_param``.

Requests without ``tools`` come from the simulated user (the example's ``simulator.model`` is
the same model): it gives its order number when asked and stops once the refund is filed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from seatrial.run import STOP_TOKEN
from seatrial.testing import FakeReply, FakeToolCall

CITIES = ("北京", "上海", "广州", "成都", "深圳")
ORDER_ID = re.compile(r"BK\d{11}")
FLIGHT_NO = re.compile(r"\b([A-Z0-9]{2}\d{3,4})\b")
DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})日")
NAME = re.compile(r"乘机人[是为：:]?\s*([\u4e00-\u9fff]{2,4})")
CONTRACT_ASK = re.compile(r"^Please use `(\w+)`.*? with (.*)\.$", re.S)
CONTRACT_VALUE = re.compile(r"(\w+) = ")
ALLOWED = re.compile(r"`(\w+)`[^`]*?; allowed values: (.*?); call")


def booking_model(body: dict[str, Any]) -> FakeReply:
    """The next answer to a chat request of the booking agent or of its simulated user."""
    messages: list[dict[str, Any]] = body["messages"]
    if not body.get("tools"):
        return _simulated_user(messages)
    last = messages[-1]
    if last["role"] == "tool":
        name, arguments = _call_of(messages, last["tool_call_id"])
        result = _result(last.get("content") or "")
        if result is None:
            return _after_error(messages, name, arguments, _error(last.get("content") or ""))
        return FakeReply(_summary(name, result))
    return _on_user(messages)


def _simulated_user(messages: list[dict[str, Any]]) -> FakeReply:
    # The simulator sees the agent's replies as user messages.
    said = messages[-1]["content"] if messages[-1]["role"] == "user" else ""
    if "退款申请已提交" in said:
        return FakeReply(f"好的，谢谢。{STOP_TOKEN}")
    if "订单号" in said:
        return FakeReply("订单号是 BK20261205002。")
    return FakeReply(f"算了。{STOP_TOKEN}")


def _users(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content") or "") for m in messages if m["role"] == "user"]


def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, name, arguments) of every tool call the model made so far."""
    found = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            function = call["function"]
            found.append((call["id"], function["name"], json.loads(function["arguments"])))
    return found


def _call_of(messages: list[dict[str, Any]], call_id: str) -> tuple[str, dict[str, Any]]:
    for found_id, name, arguments in _calls(messages):
        if found_id == call_id:
            return name, arguments
    raise AssertionError(f"no tool call {call_id} in the conversation")


def _result(content: str) -> dict[str, Any] | None:
    """The tool's result, or None when it answered an error (or no usable JSON)."""
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if not isinstance(value, dict) or not value or "error" in value:
        return None
    return value


def _error(content: str) -> str:
    """The error message of a failed call (the agent sends ``{"error": ...}``)."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    return str(value.get("error", content)) if isinstance(value, dict) else content


def _call(name: str, **arguments: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name, arguments)])


def _on_user(messages: list[dict[str, Any]]) -> FakeReply:
    users = _users(messages)
    last, everything = users[-1], "".join(users)
    contract = CONTRACT_ASK.match(last)
    if contract is not None:
        return _call(contract.group(1), **_values(contract.group(2)))
    orders = ORDER_ID.findall(everything)
    order_id = orders[-1] if orders else None
    asked = {(name, a.get("order_id")) for _, name, a in _calls(messages)}
    if "航班" in last and "查" in last:
        cities = sorted((c for c in CITIES if c in last), key=last.index)
        date = DATE.search(last)
        if len(cities) < 2 or date is None:
            return FakeReply("请告诉我出发城市、到达城市和日期。")
        year, month, day = date.group(1) or "2026", int(date.group(2)), int(date.group(3))
        day_text = f"{year}-{month:02d}-{day:02d}"
        return _call("search_flights", origin=cities[0], destination=cities[1], date=day_text)
    if "订" in last and FLIGHT_NO.search(last):
        date = DATE.search(last)
        month, day = (int(date.group(2)), int(date.group(3))) if date else (12, 20)
        name = NAME.search(last)
        # Flaw on purpose: no name asked for; the cabin in the user's words, not the enum.
        return _call(
            "book_ticket",
            flight_no=FLIGHT_NO.search(last).group(1),  # type: ignore[union-attr]
            date=f"2026-{month:02d}-{day:02d}",
            cabin="经济舱" if "经济" in last else "公务舱",
            passenger_name=name.group(1) if name else "旅客",
        )
    if "退款" in everything:
        if order_id is None:
            return FakeReply("请提供您的订单号，我来为您办理退款。")
        reason = "flight_cancelled" if "取消" in everything else "schedule_change"
        return _call("request_refund", order_id=order_id, reason=reason)
    if "取消" in last and order_id is not None:
        if ("get_order", order_id) not in asked:
            return _call("get_order", order_id=order_id)
        reason = "schedule_change" if "行程" in everything else "other"
        return _call("cancel_order", order_id=order_id, reason=reason)
    if order_id is not None:
        return _call("get_order", order_id=order_id)
    return FakeReply("您好，请问有什么可以帮您？")


def _values(text: str) -> dict[str, Any]:
    """``a = 1, b = "x, y"`` as a mapping (each value is JSON)."""
    values: dict[str, Any] = {}
    decoder = json.JSONDecoder()
    position = 0
    while (name := CONTRACT_VALUE.match(text, position)) is not None:
        values[name.group(1)], position = decoder.raw_decode(text, name.end())
        position = text.find(", ", position) + 2 if ", " in text[position:] else len(text)
    return values


def _after_error(
    messages: list[dict[str, Any]], name: str, arguments: dict[str, Any], error: str
) -> FakeReply:
    failures = sum(
        1
        for m in messages
        if m["role"] == "tool" and _result(m.get("content") or "") is None
        for found_id, found, _ in _calls(messages)
        if found_id == m["tool_call_id"] and found == name
    )
    if failures >= 2:
        return FakeReply("抱歉，系统暂时无法处理，请稍后再试。")
    if name == "get_order" and "不存在" in error:
        return FakeReply(f"抱歉，没有找到订单 {arguments.get('order_id')}，请核对订单号。")
    allowed = ALLOWED.search(error)
    if allowed is not None:
        parameter = allowed.group(1)
        choices = [json.loads(v) for v in allowed.group(2).split(", ")]
        other = next(v for v in choices if v != arguments.get(parameter))  # the first allowed
        return _call(name, **{**arguments, parameter: other})
    if name == "book_ticket" and arguments.get("cabin") not in ("economy", "business"):
        cabin = "economy" if "经济" in str(arguments.get("cabin")) else "business"
        return _call(name, **{**arguments, "cabin": cabin})
    # Flaw on purpose for request_refund; a plain retry elsewhere (an HTTP 500 may pass).
    return _call(name, **arguments)


def _summary(name: str, result: dict[str, Any]) -> str:
    try:
        return _booking_summary(name, result)
    except KeyError:  # a result of another shape (seatrial contract's plain success)
        return f"{name} 已完成：{json.dumps(result, ensure_ascii=False)}"


def _booking_summary(name: str, result: dict[str, Any]) -> str:
    if name == "search_flights":
        lines = []
        for f in result["flights"]:
            cabins = "，".join(
                f"{'经济舱' if c == 'economy' else '公务舱'}{v['price']}元（余{v['seats_left']}张）"
                for c, v in f["cabins"].items()
            )
            lines.append(f"{f['flight_no']} {f['depart']}起飞，{cabins}")
        found = "；".join(lines) or "没有航班"
        return f"{result['date']} {result['origin']}到{result['destination']}：{found}。"
    if name == "get_order":
        return (
            f"订单 {result['order_id']}：乘机人{result['passenger_name']}，航班 "
            f"{result['flight_no']}，{result['date']}，状态：{result['status']}。"
        )
    if name == "book_ticket":
        return (
            f"已出票，订单号 {result['order_id']}，{result['flight_no']} {result['date']}，"
            f"{result['price']} 元。"
        )
    if name == "cancel_order":
        return f"订单 {result['order_id']} 已取消，退款 {result['refund_amount']} 元。"
    return (
        f"退款申请已提交：订单 {result['order_id']}，退款 {result['refund_amount']} 元，"
        f"预计{result['arrives_in']}到账。"
    )
