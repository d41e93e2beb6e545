"""Tool calls a model wrote as text instead of calling the tool.

Small models often answer ``{"name": "book_ticket", "arguments": {...}}`` (bare, in a
```` ```json ```` fence, or in Qwen's ``<tool_call>...</tool_call>`` tags) as their reply's
content, with no ``tool_calls``: the tool never runs, and the JSON would pass as the answer.
:func:`text_tool_calls` finds such calls of the agent's own tools; JSON that names no tool of
the agent (a booking record, a name that is not a tool) is an ordinary answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def text_tool_calls(content: str | None, tools: Collection[str]) -> list[tuple[str, Any]]:
    """The calls of ``tools`` written as text in ``content``: (tool, arguments) in order.

    The whole content may be one call (or a list of calls) as JSON, or calls may sit in
    fenced code blocks or ``<tool_call>`` tags among other text. A call is an object with a
    ``name`` (or ``function.name``) among ``tools`` and ``arguments`` (or ``parameters``):
    an object, or a JSON text of one.
    """
    if not content or not tools:
        return []
    text = content.strip()
    pieces = [text]
    pieces += [m.group(1) for m in _FENCE.finditer(text)]
    pieces += [m.group(1) for m in _TAGGED.finditer(text)]
    calls: list[tuple[str, Any]] = []
    for piece in pieces:
        try:
            value = json.loads(piece.strip())
        except ValueError:
            continue
        for item in value if isinstance(value, list) else [value]:
            call = _as_call(item, tools)
            if call is not None:
                calls.append(call)
        if calls and piece is text:
            break  # the whole reply was the call(s): its fences are inside strings
    return calls


def _as_call(item: Any, tools: Collection[str]) -> tuple[str, Any] | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict) and "name" in function:
        item = function
    name = item.get("name")
    if not isinstance(name, str) or name not in tools:
        return None
    if "arguments" in item:
        arguments = item["arguments"]
    elif "parameters" in item:
        arguments = item["parameters"]
    else:
        return None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    return (name, arguments) if isinstance(arguments, dict) else None
