"""Strategies the property tests share: JSON-like values and real exports with parts replaced."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from seatrial.trace import Trace, TraceRecorder, trace_to_otlp
from seatrial.trace import attrs as A
from tests.conftest import bundled_data

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["", "0", "-1", "1e400", "2024-01-01T00:00:00Z", "ab" * 8, "ab" * 16])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=12,
)


def recorded_trace() -> Trace:
    """A small real trace: an agent run, one model call and one failed tool call."""
    recorder = TraceRecorder()
    with recorder.span("invoke_agent shop", {A.OPERATION: A.OP_INVOKE_AGENT}):
        with recorder.span("chat gpt-4o", {A.OPERATION: "chat", A.REQUEST_MODEL: "gpt-4o"}):
            pass
        with recorder.span(
            "execute_tool refund", {A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: "refund"}
        ) as tool:
            tool.status = "error"
        recorder.event(A.TURN, {A.TURN_INDEX: 0, A.TURN_MESSAGE: "hi"})
    return recorder.trace()


def seeds() -> dict[str, Any]:
    """One real file of each format the reader knows, parsed; the mutations start here."""
    return {
        "otlp-json": trace_to_otlp(recorded_trace()),
        "langfuse": json.loads(bundled_data("langfuse/trace-v3-agent.json").read_text()),
        "openinference": json.loads(
            bundled_data("openinference/phoenix-rest-spans.json").read_text()
        ),
        "swe-agent": json.loads(
            bundled_data("swe-agent/function_calling_simple.traj.json").read_text()
        ),
        "openai-chat": {
            "request": {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": "refund A1001"}],
            },
            "response": {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "type": "function",
                                    "function": {"name": "refund", "arguments": "{}"},
                                }
                            ],
                        }
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            },
        },
        "tools-called": {
            "session_id": "s1",
            "response": "done",
            "tools_called": [
                {"name": "refund", "input": {"order": "A1001"}, "latency_ms": 12, "success": True}
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        },
    }


SEEDS = seeds()


def places(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a parsed document, the root included, as a path of keys and indices."""
    found = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            found.extend(places(value, (*path, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.extend(places(value, (*path, index)))
    return found


def replaced(data: Any, path: tuple[Any, ...], how: str, value: Any) -> Any:
    """``data`` with the part at ``path`` replaced by ``value``, deleted, or doubled."""
    if not path:
        return value
    data = copy.deepcopy(data)
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "double" and isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
    else:
        parent[last] = value
    return data


@st.composite
def mutated_exports(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    data = SEEDS[name]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(places(data)))
        how = draw(st.sampled_from(["replace", "replace", "delete", "double"]))
        data = replaced(data, path, how, draw(json_values))
    return name, data
