"""SWE-agent trajectories (``.traj`` files) as traces: one file, one trace.

A trajectory holds ``trajectory`` (one step per command: ``action``, ``observation``,
``thought``, ``response``, ``execution_time``), ``history`` (the messages the model saw and
wrote; with function calling its assistant messages carry ``tool_calls``) and ``info``
(``exit_status``, ``submission``, ``model_stats``). Either list may be missing.

The issue (the first user message that is not a demonstration) is the user turn; each step is
a ``chat`` span (the thought) and an ``execute_tool`` span whose result is the observation.
The tool and its arguments come from the step's function call where ``history`` records one,
else from the command: its first word is the tool (``open``, ``edit``, ``python``) and the
whole command is the ``command`` argument. ``info`` goes on the root span. See
docs/ingestion.md.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from typing import Any

from seatrial.i18n import gettext as _
from seatrial.trace import _attrs as A
from seatrial.trace._conversation import (
    CONVERSATION_STEP_NS,
    ConversationCall,
    ConversationMessage,
    build_conversation,
    content_id,
)
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._span import Span, Trace
from seatrial.trace._tools_called import encode_json

FORMAT = "swe-agent"
AGENT = "swe-agent"
EXIT_STATUS = "swe_agent.exit_status"
"""Root-span attribute: how the run ended (``submitted``, ``exit_cost``, ``exit_format``...)."""
SUBMISSION = "swe_agent.submission"
"""Root-span attribute: the patch the agent submitted."""
MODEL_STATS = "swe_agent.model_stats"
"""Root-span attribute: ``info.model_stats`` as JSON (tokens, API calls, cost)."""
INFO = "swe_agent.info"
"""Root-span attribute: the rest of ``info`` as JSON (e.g. ``edited_files30``)."""
INSTANCE_ID = "swe_agent.instance_id"
"""Root-span attribute: the task instance, from the replay configuration."""
ENVIRONMENT = "swe_agent.environment"
"""Root-span attribute: the environment's name."""
_SUBMITTED = "submitted"


def matches(data: Any) -> bool:
    """A trajectory: ``trajectory`` steps with an ``action``, or SWE-agent ``history``.

    SWE-agent's predictions file (``all_preds.jsonl``: ``instance_id``, ``model_patch``) is
    not a trajectory and does not match.
    """
    first = data[0] if isinstance(data, list) and data else data
    if not isinstance(first, Mapping):
        return False
    steps = first.get("trajectory")
    if isinstance(steps, list) and steps and isinstance(steps[0], Mapping):
        return "action" in steps[0]
    history = first.get("history")
    return (
        isinstance(history, list)
        and bool(history)
        and isinstance(history[0], Mapping)
        and "role" in history[0]
        and ("agent" in history[0] or "message_type" in history[0])
    )


def read(data: Any, *, start_ns: int | None = None) -> list[Trace]:
    """One trace per trajectory (a ``.traj`` document, or a list of them).

    The files record how long each command ran but not when: times start at ``start_ns``
    (the moment the file is read when not given), one millisecond per model turn plus each
    command's ``execution_time``.
    """
    if isinstance(data, list):
        documents, prefix = data, "[{}]"
    else:
        documents, prefix = [data], ""
    cursor = start_ns if start_ns is not None else time.time_ns()
    traces = []
    for index, document in enumerate(documents):
        where = prefix.format(index)
        if not isinstance(document, Mapping):
            raise TraceFormatError(
                _("{where}: expected a SWE-agent trajectory (an object)").format(where=where)
            )
        history = _history(document.get("history"), f"{where}.history")
        messages = _problem(history, document) + _steps(document, history, where)
        info = document.get("info", {})
        if not isinstance(info, Mapping):
            raise TraceFormatError(
                _("{where}.info: expected an object (exit_status, model_stats)").format(where=where)
            )
        conversation = build_conversation(
            messages,
            agent=AGENT,
            model=_model(document),
            start_ns=cursor,
            root_attributes=_root_attributes(document, history, info, f"{where}.info"),
            trace_id=content_id(FORMAT, document),
        )
        _mark_exit(conversation.trace.spans[0], info)
        traces.append(conversation.trace)
        cursor = conversation.finished_ns + CONVERSATION_STEP_NS
    return traces


def _history(history: Any, where: str) -> list[Mapping[str, Any]]:
    """The messages that were not demonstrations, each checked to have a role."""
    if history is None:
        return []
    if not isinstance(history, list):
        raise TraceFormatError(_("{where}: expected a list of messages").format(where=where))
    kept = []
    for position, message in enumerate(history):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise TraceFormatError(
                _("{where}[{position}]: expected a message with a `role`").format(
                    where=where, position=position
                )
            )
        if not message.get("is_demo"):
            kept.append(message)
    return kept


def _problem(
    history: list[Mapping[str, Any]], document: Mapping[str, Any]
) -> list[ConversationMessage]:
    """The issue as the user turn: the first user message, else the replay config's text."""
    for message in history:
        if message["role"] == "user":
            return [ConversationMessage("user", _text(message.get("content")))]
    problem = _dig(document, "replay_config", "problem_statement", "text")
    return [ConversationMessage("user", problem)] if isinstance(problem, str) else []


def _steps(
    document: Mapping[str, Any], history: list[Mapping[str, Any]], where: str
) -> list[ConversationMessage]:
    """An assistant message and a tool message per step (from ``trajectory``, else history)."""
    turns = [m for m in history if m["role"] == "assistant"]
    steps = document.get("trajectory")
    if steps is None:
        return _steps_from_history(history)
    if not isinstance(steps, list):
        raise TraceFormatError(
            _("{where}.trajectory: expected a list of steps").format(where=where)
        )
    # The i-th assistant message wrote the i-th step, unless the history was cut short.
    paired = len(turns) == len(steps)
    messages = []
    for index, step in enumerate(steps):
        at = f"{where}.trajectory[{index}]"
        if not isinstance(step, Mapping) or not isinstance(step.get("action"), str):
            raise TraceFormatError(
                _("{at}.action: expected the command the agent ran (a string)").format(at=at)
            )
        turn = turns[index] if paired else {}
        calls = _calls(turn, step["action"], index)
        thought = step.get("thought") if step.get("thought") is not None else step.get("response")
        messages.append(ConversationMessage("assistant", _text(thought), calls))
        if calls:
            seconds = _seconds(step.get("execution_time"), f"{at}.execution_time")
            messages.append(
                ConversationMessage(
                    "tool",
                    _text(step.get("observation")),
                    answers=calls[0].call_id,
                    duration_ns=int(seconds * 1e9) if seconds is not None else None,
                )
            )
    return messages


def _steps_from_history(history: list[Mapping[str, Any]]) -> list[ConversationMessage]:
    """Steps read off the history alone: observations follow the action they answer."""
    messages: list[ConversationMessage] = []
    pending: str | None = None
    seen_problem = False
    for position, message in enumerate(history):
        role = message["role"]
        if role == "assistant":
            calls = _calls(message, str(message.get("action") or ""), position)
            text = message.get("thought") or message.get("content")
            messages.append(ConversationMessage("assistant", _text(text), calls))
            pending = calls[0].call_id if calls else None
        elif role == "tool" or (role == "user" and seen_problem):
            ids = message.get("tool_call_ids")
            answers = str(ids[0]) if isinstance(ids, list) and ids else pending
            messages.append(
                ConversationMessage("tool", _text(message.get("content")), answers=answers)
            )
            pending = None
        seen_problem = seen_problem or role == "user"
    return messages


def _calls(turn: Mapping[str, Any], action: str, index: int) -> tuple[ConversationCall, ...]:
    """The step's tool call: the recorded function call, else the command's first word."""
    recorded = turn.get("tool_calls")
    if isinstance(recorded, list) and recorded:
        calls = []
        for n, call in enumerate(recorded):
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                arguments = function.get("arguments", "{}")
                if not isinstance(arguments, str):
                    arguments = encode_json(arguments)
                call_id = str(call.get("id") or f"step_{index}_{n}")
                calls.append(ConversationCall(call_id, function["name"], arguments))
        if calls:
            return tuple(calls)
    words = action.split()
    if not words:
        return ()  # the model wrote no command (a format error): a model turn, no tool call
    return (ConversationCall(f"step_{index}", words[0], encode_json({"command": action})),)


def _model(document: Mapping[str, Any]) -> str:
    name = _dig(document, "replay_config", "agent", "model", "name")
    return name if isinstance(name, str) and name else "unknown"


def _root_attributes(
    document: Mapping[str, Any],
    history: list[Mapping[str, Any]],
    info: Mapping[str, Any],
    where: str,
) -> dict[str, Any]:
    """``info`` (exit status, submission, tokens, cost), the instance and the system prompt."""
    attributes: dict[str, Any] = {}
    if info.get("exit_status") is not None:
        attributes[EXIT_STATUS] = str(info["exit_status"])
    if isinstance(info.get("submission"), str):
        attributes[SUBMISSION] = info["submission"]
    stats = info.get("model_stats")
    if stats is not None:
        if not isinstance(stats, Mapping):
            raise TraceFormatError(
                _("{where}.model_stats: expected an object (tokens_sent, ...)").format(where=where)
            )
        attributes[MODEL_STATS] = encode_json(stats)
        for key, name in (("tokens_sent", A.INPUT_TOKENS), ("tokens_received", A.OUTPUT_TOKENS)):
            attributes[name] = _count(stats.get(key, 0), f"{where}.model_stats.{key}")
        cost = stats.get("instance_cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
            attributes[A.COST_USD] = float(cost)
    rest = {k: v for k, v in info.items() if k not in ("exit_status", "submission", "model_stats")}
    if rest:
        attributes[INFO] = encode_json(rest)
    instance = _dig(document, "replay_config", "agent", "name")
    if isinstance(instance, str) and instance:
        attributes[INSTANCE_ID] = instance
    if isinstance(document.get("environment"), str):
        attributes[ENVIRONMENT] = document["environment"]
    system = [_text(m.get("content")) for m in history if m["role"] == "system"]
    if system:
        parts = [{"type": "text", "content": text or ""} for text in system]
        attributes[A.SYSTEM_INSTRUCTIONS] = json.dumps(parts, ensure_ascii=False)
    return attributes


def _mark_exit(root: Span, info: Mapping[str, Any]) -> None:
    """A run that ended other than by submitting (cost limit, format errors) is an error."""
    status = info.get("exit_status")
    if isinstance(status, str) and status and not status.startswith(_SUBMITTED):
        root.attributes[A.ERROR_TYPE] = status
        root.status = "error"
        root.status_message = f"SWE-agent exit status {status}"


def _text(value: Any) -> str:
    """ConversationMessage content: a string, or the text parts of a list of content parts."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str(part.get("text", "")) for part in value if isinstance(part, Mapping))
    return str(value)


def _seconds(value: Any, where: str) -> float | None:
    """``execution_time``: seconds, written as a number or as text."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise TraceFormatError(
            _("{where}: expected a number of seconds").format(where=where)
        ) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise TraceFormatError(_("{where}: expected a number of seconds >= 0").format(where=where))
    return seconds


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TraceFormatError(_("{where}: expected a whole number >= 0").format(where=where))
    return value


def _dig(document: Mapping[str, Any], *keys: str) -> Any:
    value: Any = document
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value
