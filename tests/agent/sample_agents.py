"""Agents and tools the python adapter tests load by file path."""

from __future__ import annotations

import asyncio

import seatrial
from seatrial.agent import Session, ToolDenied

ORDERS = {"1001": {"status": "delivered", "total": 42.5}}


@seatrial.tool(read_only=True)
def lookup_order(order_id: str) -> dict:
    """A read-only tool."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return ORDERS[order_id]


@seatrial.tool
def refund_order(order_id: str, reason: str = "customer request") -> dict:
    """A write tool (not declared read-only)."""
    return {"refunded": order_id, "reason": reason}


@seatrial.tool(name="weather", read_only=True)
async def fetch_weather(city: str) -> str:
    """An async read-only tool with its own name."""
    await asyncio.sleep(0)
    return f"rainy in {city}"


def support(message: str, session: Session) -> str | dict:
    """Looks the order up, refunds it on the second turn, counts turns in session.state."""
    session.state["turns"] = session.state.get("turns", 0) + 1
    with session.model_call("gpt-4o", provider="openai") as call:
        call.report(
            input_tokens=120, output_tokens=30, response_model="gpt-4o-2024-08-06", cost_usd=0.001
        )
    order = lookup_order("1001")
    if session.turn_index == 0:
        return f"order 1001 is {order['status']}"
    refund = refund_order(order_id="1001")
    return {
        "response": f"refunded {refund['refunded']}",
        "final_state": {"refund": refund, "turns": session.state["turns"]},
    }


async def async_support(message: str, session: Session) -> str:
    """The async twin: an async tool, a model call and a routing decision."""
    session.skill("Weather")
    with session.model_call("qwen-max") as call:
        call.report(input_tokens=10, output_tokens=5)
    forecast = await fetch_weather(city="Paris")
    return forecast


def refunds_everything(message: str, session: Session) -> str:
    """Tries to refund two orders; a once grant lets only the first through."""
    done = []
    for order_id in ("1", "2"):
        try:
            refund_order(order_id)
            done.append(order_id)
        except ToolDenied as denied:
            done.append(f"denied:{denied.scope}")
    return ",".join(done)


def by_name(message: str, session: Session) -> str:
    """Calls tools by name, as a tool-calling loop does."""
    found = session.call_tool("lookup_order", order_id="1001")
    return str(found["status"])


def fails_deep(message: str, session: Session) -> str:
    """Raises from a helper, to check where the error is reported."""
    return _helper(message)


def _helper(message: str) -> str:
    raise LookupError(f"no handler for {message!r}")


def returns_a_number(message: str, session: Session) -> int:
    """Breaks the contract: neither a str nor a dict with a response."""
    return 42
