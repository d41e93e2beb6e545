"""OpenAI-style messages and tool calls in Langfuse observations, as GenAI messages and spans.

Langfuse stores a generation's ``input`` and ``output`` as the provider's request and answer:
OpenAI chat messages (``{role, content, tool_calls, tool_call_id}``), a ``{"messages": [...]}``
object, or plain text. They become ``gen_ai.input.messages`` / ``gen_ai.output.messages``;
anything else is kept as JSON text under the observation's own name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from seatrial.trace._normalize import genai_message
from seatrial.trace._tools_called import encode_json


def put_messages(
    attrs: dict[str, Any], key: str, value: Any, default_role: str, fallback_key: str
) -> None:
    """OpenAI-style messages as GenAI messages under ``key``; anything else kept as text."""
    if value is None:
        return
    messages = _as_messages(value, default_role)
    if messages is None:
        attrs[fallback_key] = json_text(value)
    else:
        attrs[key] = json.dumps(messages, ensure_ascii=False, separators=(",", ":"))


def _as_messages(value: Any, default_role: str) -> list[dict[str, Any]] | None:
    if isinstance(value, str):
        return [genai_message(default_role, value)]
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if isinstance(value, Mapping) and "role" in value:
        value = [value]
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(m, Mapping) and "role" in m for m in value):
        return None
    return [
        genai_message(
            str(m["role"]),
            _content_text(m.get("content")),
            tool_calls=_openai_tool_calls(m),
            tool_call_id=m.get("tool_call_id"),
        )
        for m in value
    ]


def _content_text(content: Any) -> Any:
    """A message's text: OpenAI content parts are joined, other content kept as it is."""
    if isinstance(content, list):
        texts = [
            str(part.get("text"))
            for part in content
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text")
        ]
        return "\n".join(texts) if texts else json_text(content)
    return content


def _openai_tool_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for call in message.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            continue
        function = mapping(call.get("function")) or call
        calls.append(
            {
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    return calls


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def json_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return encode_json(value)


def _put_value(attrs: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != "":
        attrs[key] = value
