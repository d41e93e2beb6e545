"""A booking desk agent for simulated-user tests, and the simulated user's scripted model."""

from __future__ import annotations

from typing import Any

import openai

import seatrial
from seatrial.agent import Session
from seatrial.testing import FakeReply

AGENT_MODEL = "desk-v1"
"""The upstream id of the agent's model (``models: desk``)."""
SIMULATOR_MODEL = "user-v1"
"""The upstream id of the simulated user's model (``models: user``)."""
PHONE = "13800138000"
"""A hidden fact of the leaking user."""


@seatrial.tool
def book_table(date: str, name: str) -> dict[str, str]:
    """Books a table (a tool span in the trace)."""
    return {"booked": f"{date} for {name}"}


async def booking_desk(message: str, session: Session) -> str:
    """Asks for the date, then the name, then books; each turn also asks its model (through
    the attempt's gateway URL) for a greeting, so the agent has a cost of its own."""
    async with openai.AsyncOpenAI(
        base_url=session.gateway_url, api_key="agent-side-key", max_retries=0
    ) as client:
        await client.chat.completions.create(
            model="desk", messages=[{"role": "user", "content": message}]
        )
    state: dict[str, Any] = session.final_state or {}
    text = message.casefold()
    if "friday" in text:
        state["date"] = "Friday"
    if "li wei" in text:
        state["name"] = "Li Wei"
    session.final_state = state
    if "date" not in state:
        return "Which date would you like?"
    if "name" not in state:
        return "What name is the booking under?"
    await session.call_tool_async("book_table", date=state["date"], name=state["name"])
    state["booked"] = True
    return f"Booked: a table on {state['date']} for {state['name']}."


def _user_says(body: dict[str, Any]) -> str:
    messages = body["messages"]
    system = str(messages[0]["content"])
    last = str(messages[-1]["content"])
    if "conversation starts" in last:
        return "Hi, I'd like to book a table for two."
    if "Which date" in last:
        return (
            f"Friday. My phone is {PHONE}, by the way."
            if "oversharer" in system
            else ("Friday, please.")
        )
    if "What name" in last:
        if "blabbermouth" in system:
            return f"Li Wei, my phone is {PHONE}."
        return "Li Wei."
    if "oversharer" in system:
        return "Sorry, could you say that again?"  # never stops by itself
    if "Booked" in last:
        return "Great, thanks! ###STOP###"
    return "Sorry, could you say that again?"


def model_script(body: dict[str, Any]) -> FakeReply:
    """The upstream's answers: the desk's greeting, or the simulated user's next message."""
    if body["model"] == AGENT_MODEL:
        return FakeReply("Hello.", input_tokens=100, output_tokens=10)
    return FakeReply(_user_says(body), input_tokens=1000, output_tokens=20)


def _desk_says(body: dict[str, Any]) -> str:
    last = str(body["messages"][-1]["content"]).casefold()
    if "friday" in last:
        return "What name is the booking under?"
    if "li wei" in last:
        return "Booked: a table on Friday for Li Wei."
    return "Which date would you like?"


def model_agent_script(body: dict[str, Any]) -> FakeReply:
    """The upstream's answers when the desk is a ``model:`` agent: its model answers the
    conversation, the simulated user's model plays the diner."""
    if body["model"] == AGENT_MODEL:
        return FakeReply(_desk_says(body), input_tokens=100, output_tokens=10)
    return FakeReply(_user_says(body), input_tokens=1000, output_tokens=20)
