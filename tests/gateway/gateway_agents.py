"""Agents that call a model through the gateway URL their attempt was given."""

from __future__ import annotations

import openai

from seatrial.agent import Session


async def async_model_agent(message: str, session: Session) -> str:
    """Asks the model through ``session.gateway_url`` (AsyncOpenAI)."""
    async with openai.AsyncOpenAI(
        base_url=session.gateway_url, api_key="agent-side-key", max_retries=0
    ) as client:
        answer = await client.chat.completions.create(
            model="main", messages=[{"role": "user", "content": message}]
        )
    return answer.choices[0].message.content or ""


def sync_model_agent(message: str, session: Session) -> str:
    """The same with the synchronous client (the python adapter runs it in a thread)."""
    with openai.OpenAI(
        base_url=session.gateway_url, api_key="agent-side-key", max_retries=0
    ) as client:
        answer = client.chat.completions.create(
            model="main", messages=[{"role": "user", "content": message}]
        )
    return answer.choices[0].message.content or ""
