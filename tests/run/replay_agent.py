"""An order agent for the replay tests: it asks the model through the gateway twice, with a
tool call in between, and describes itself (its prompt and tool schemas as hashes).

The tests copy this file into a temporary project and edit ``PROMPT`` there to change the
agent's prompt between recording and replaying.
"""

from __future__ import annotations

import json
from typing import Any

import openai

import seatrial
from seatrial.agent import Session

PROMPT = "You look up orders for customers."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "order_status",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


@seatrial.tool(read_only=True)
def order_status(order_id: str) -> dict[str, Any]:
    """The order's status."""
    return {"order_id": order_id, "status": "shipped"}


def agent(message: str, session: Session) -> str:
    """Model -> order_status -> model -> reply."""
    session.describe(version="1", prompt=PROMPT, tools=TOOLS, model="main")
    with openai.OpenAI(
        base_url=session.gateway_url, api_key="agent-side-key", max_retries=0
    ) as client:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": message},
        ]
        first = client.chat.completions.create(model="main", messages=messages, tools=TOOLS)
        asked = first.choices[0].message
        messages.append(asked.model_dump(exclude_none=True))
        for call in asked.tool_calls or []:
            result = session.call_tool(call.function.name, **json.loads(call.function.arguments))
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
        second = client.chat.completions.create(model="main", messages=messages, tools=TOOLS)
    return second.choices[0].message.content or ""
