"""The in-process agent the runner benchmark drives: sleeps 50 ms like a fast remote agent."""

from __future__ import annotations

import asyncio

from seatrial.agent import Session, tool

LATENCY_S = 0.05


@tool
def lookup_order(order_id: str) -> dict[str, str]:
    """A tool the agent calls once per turn (recorded as an execute_tool span)."""
    return {"order_id": order_id, "status": "shipped"}


async def agent(message: str, session: Session) -> str:
    """One model call, one tool call, 50 ms of 'thinking'."""
    with session.model_call("bench-model") as call:
        await asyncio.sleep(LATENCY_S)
        call.report(input_tokens=120, output_tokens=30)
    order = lookup_order(order_id="A1001")
    return f"Order {order['order_id']} is {order['status']}."
