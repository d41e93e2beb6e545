"""Tool implementations of the ``model:`` agents in test_model_agent.py."""

from __future__ import annotations

from typing import Any

import seatrial
from seatrial.agent import Session, ToolError

ORDERS = {"A1": {"status": "shipped", "address": "1 Rue de Rivoli"}}


def lookup_order(order_id: str) -> dict[str, Any]:
    """An order's status; an id not like ``A1`` is refused with what a valid one looks like."""
    if not order_id.startswith("A"):
        raise ToolError(
            f"order_id {order_id!r} is not an order id: write `A` then digits, e.g. A1",
            "invalid_arguments",
        )
    return ORDERS.get(order_id, {"status": "unknown"})


def book_visit(order_id: str, slot: str, session: Session) -> dict[str, Any]:
    """Book a visit; reports the booking as the attempt's final state."""
    session.final_state = {"booked": {"order_id": order_id, "slot": slot}}
    return {"booked": True, "slot": slot}


@seatrial.tool(read_only=True)
async def forecast(city: str) -> str:
    """A read-only async tool, declared with ``@seatrial.tool``."""
    return f"sunny in {city}"
