"""A trajectory as steps: what a trace diff aligns and compares.

:func:`steps_of` reads a trace's spans and events in time order and turns each into a
:class:`Step`: model calls, tool calls, permission decisions, state changes, and one reply per
user turn. Each step carries a normalised ``key``: ids, timestamps, durations, token counts,
cost, model names, temporary workspace paths and whitespace are left out of it, so two
attempts that did the same thing compare equal.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from seatrial.i18n import gettext as _
from seatrial.trace import Span, SpanEvent, Trace, decode_attribute
from seatrial.trace import attrs as A

StepKind = Literal["model_call", "tool_call", "permission", "state_change", "reply"]

REQUEST_HASH = "seatrial.gateway.request_hash"
"""The gateway's hash of a model request (the cassette key), on ``chat`` spans."""
"""The model's answer as OTel GenAI output messages (a JSON list), on ``chat`` spans."""

_MODEL_OPERATIONS = (A.OP_CHAT, "text_completion", "generate_content")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# 16+ hex characters with a letter and a digit: random ids, not 18-digit numbers or words.
_HEX = re.compile(
    r"(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{16,}(?![0-9A-Za-z])"
)
_SPACE = re.compile(r"\s+")
# Keys of a tool result whose values are clocks or timings, not what the tool answered.
_TIMING_KEY = re.compile(
    r"^(timestamp|elapsed|duration|latency)(_\w+)?$|_(at|ms|ns|timestamp)$", re.I
)


def _temp_roots() -> list[str]:
    """Folders a fresh workspace can live in: the system temp dir and the usual ones."""
    roots = {tempfile.gettempdir(), "/tmp", "/private/tmp"}
    roots |= {root.replace("\\", "/") for root in list(roots)}
    escaped = sorted((re.escape(r.rstrip("/")) for r in roots if r.rstrip("/")), key=len)
    return [*reversed(escaped), r"(?:/private)?/var/folders/[^/\s]+/[^/\s]+/T"]


_WORKSPACE = re.compile(r"(?:" + "|".join(_temp_roots()) + r")/[^/\s'\"`,;:)\]}]+")


@dataclass(frozen=True)
class Step:
    """One step of a trajectory, as the diff shows and compares it."""

    index: int
    """0-based position in its own trajectory."""
    kind: StepKind
    """model_call, tool_call, permission, state_change or reply."""
    turn: int | None
    """0-based user turn, when known."""
    label: str
    """One line a human reads: ``read_file(path='a.md') FAILED (FileNotFoundError)``."""
    key: tuple[Any, ...]
    """What is compared: the normalised content, hashable."""
    span_id: str | None
    """The span it was read from (None for replies)."""
    detail: dict[str, Any] = field(default_factory=dict)
    """The normalised content, for JSON: name, arguments, result, error, answer, text ..."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: index, kind, turn, label, span_id, detail (the key stays internal)."""
        return {
            "index": self.index,
            "kind": self.kind,
            "turn": self.turn,
            "label": self.label,
            "span_id": self.span_id,
            "detail": self.detail,
        }


def normalise_text(text: str) -> str:
    """Ids and temporary workspace paths replaced by placeholders (``<id>``, ``<workspace>``)."""
    text = _WORKSPACE.sub("<workspace>", text)
    return _HEX.sub("<id>", _UUID.sub("<id>", text))


def normalise(value: Any, *, result: bool = False) -> Any:
    """A JSON value with its strings normalised; in a tool ``result``, timings dropped."""
    if isinstance(value, str):
        return normalise_text(value)
    if isinstance(value, dict):
        return {
            str(k): "<ignored>" if result and _TIMING_KEY.search(str(k)) else normalise(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [normalise(v, result=result) for v in value]
    return value


def _squashed(value: Any) -> Any:
    """Whitespace runs collapsed in every string (the key ignores whitespace)."""
    if isinstance(value, str):
        return _SPACE.sub(" ", value).strip()
    if isinstance(value, dict):
        return {k: _squashed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_squashed(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """A stable, whitespace-insensitive string of a normalised value, for keys."""
    return json.dumps(_squashed(value), sort_keys=True, ensure_ascii=False, default=str)


def short(value: Any, limit: int = 40) -> str:
    """A value's repr on one line, cut to ``limit`` characters."""
    text = _SPACE.sub(" ", repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_text(name: str, arguments: Any) -> str:
    """``name(k='v', ...)`` with each value shortened."""
    if isinstance(arguments, dict):
        inner = ", ".join(f"{k}={short(v)}" for k, v in arguments.items())
    elif arguments in (None, "", [], {}):
        inner = ""
    else:
        inner = short(arguments)
    return f"{name}({inner})"


def _answer(messages: Any) -> list[dict[str, Any]] | None:
    """OTel output messages with call ids dropped and arguments decoded."""
    messages = decode_attribute(messages)
    if not isinstance(messages, list):
        return None if messages is None else [{"parts": [{"type": "text", "content": messages}]}]
    answer = []
    for message in messages:
        if not isinstance(message, dict):
            answer.append({"parts": [{"type": "text", "content": str(message)}]})
            continue
        parts = []
        for part in message.get("parts") or []:
            if not isinstance(part, dict):
                continue
            kept = {k: v for k, v in part.items() if k != "id"}
            if "arguments" in kept:
                kept["arguments"] = decode_attribute(kept["arguments"])
            parts.append(normalise(kept))
        entry: dict[str, Any] = {"role": message.get("role"), "parts": parts}
        if message.get("finish_reason") is not None:
            entry["finish_reason"] = message["finish_reason"]
        answer.append(entry)
    return answer


def answer_text(answer: list[dict[str, Any]] | None) -> str:
    """The answer on one line: its text, or the tool calls it asks for."""
    bits = []
    for message in answer or []:
        for part in message.get("parts", []):
            if part.get("type") == "text":
                bits.append(short(str(part.get("content", "")), 50))
            elif part.get("type") == "tool_call":
                bits.append(call_text(str(part.get("name")), part.get("arguments")))
    return "; ".join(bits)


def _model_step(span: Span) -> tuple[StepKind, str, tuple[Any, ...], dict[str, Any]]:
    attrs = span.attributes
    model = str(attrs.get(A.RESPONSE_MODEL) or attrs.get(A.REQUEST_MODEL) or "")
    request_hash = attrs.get(REQUEST_HASH)
    answer = _answer(attrs.get(A.OUTPUT_MESSAGES)) if A.OUTPUT_MESSAGES in attrs else None
    error = attrs.get(A.ERROR_TYPE)
    detail = {"model": model, "request_hash": request_hash, "answer": answer, "error": error}
    label = f"{span.operation} {model}".strip()
    if answer is not None:
        said = answer_text(answer) or _("(empty answer)")
        label += f" -> {said}"
    if error is not None:
        label += _(" FAILED ({error})").format(error=error)
    key = ("model_call", request_hash, None if answer is None else canonical(answer), error)
    return "model_call", label, key, detail


def _tool_step(span: Span) -> tuple[StepKind, str, tuple[Any, ...], dict[str, Any]]:
    attrs = span.attributes
    name = str(attrs.get(A.TOOL_NAME, span.name.removeprefix("execute_tool ")))
    arguments = normalise(decode_attribute(attrs.get(A.TOOL_ARGUMENTS)))
    result = normalise(decode_attribute(attrs.get(A.TOOL_RESULT)), result=True)
    error_type = attrs.get(A.ERROR_TYPE)
    success = error_type is None and span.status != "error"
    error = normalise_text(span.status_message) if not success and span.status_message else None
    detail = {
        "name": name,
        "arguments": arguments,
        "result": result,
        "success": success,
        "error_type": error_type,
        "error": error,
    }
    outcome = _("ok") if success else _("FAILED ({error})").format(error=error_type or "error")
    label = f"{call_text(name, arguments)} {outcome}"
    key = ("tool_call", name, canonical(arguments), canonical([success, error_type, result, error]))
    return "tool_call", label, key, detail


def _event_step(event: SpanEvent) -> tuple[StepKind, str, tuple[Any, ...], dict[str, Any]] | None:
    if event.name == A.PERMISSION:
        tool = event.value(A.PERMISSION_TOOL)
        scope = event.value(A.PERMISSION_SCOPE)
        decision = event.value(A.PERMISSION_DECISION)
        detail = {
            "tool": tool,
            "scope": scope,
            "decision": decision,
            "reason": event.value(A.PERMISSION_REASON),
        }
        label = _("permission {tool}: {decision} ({scope})").format(
            tool=tool, decision=decision, scope=scope
        )
        return "permission", label, ("permission", tool, scope, decision), detail
    if event.name == A.STATE_CHANGE:
        target = normalise(event.value(A.STATE_TARGET))
        op = event.value(A.STATE_OP)
        detail = {"target": target, "op": op}
        label = _("state change: {op} {target}").format(op=op, target=target)
        return "state_change", label, ("state_change", canonical(target), op), detail
    return None


def _reply(index: int, turn: int, text: str) -> Step:
    normalised = normalise_text(text)
    return Step(
        index=index,
        kind="reply",
        turn=turn,
        label=_("reply {text}").format(text=short(normalised, 60)),
        key=("reply", canonical(normalised)),
        span_id=None,
        detail={"turn": turn, "text": normalised},
    )


def steps_of(trace: Trace | None, responses: Sequence[str] = ()) -> list[Step]:
    """The steps of one attempt in time order, with a reply after each user turn's last step.

    Turns come from ``seatrial.turn.index`` (on spans, and the ``seatrial.turn`` events that
    open each turn); without any, every reply comes after the last step.
    """
    timeline: list[tuple[int, int, Span, SpanEvent | None]] = []
    for order, span in enumerate(trace.spans if trace is not None else []):
        timeline.append((span.start_time_unix_nano, order, span, None))
        timeline.extend((e.time_unix_nano, order, span, e) for e in span.events)
    # Stable: a span's own step comes before its events (both sorted by time).
    timeline.sort(key=lambda item: (item[0], item[1], item[3] is not None))

    steps: list[Step] = []
    replied = 0
    turn: int | None = None

    def reply_until(before: int) -> None:
        nonlocal replied
        while replied < min(before, len(responses)):
            steps.append(_reply(len(steps), replied, responses[replied]))
            replied += 1

    for _order, _at, span, event in timeline:
        if event is not None and event.name == A.TURN:
            index = event.value(A.TURN_INDEX)
            if isinstance(index, int):
                turn = index
                reply_until(index)
            continue
        span_turn = span.attributes.get(A.TURN_INDEX)
        step_turn = span_turn if isinstance(span_turn, int) else turn
        if event is not None:
            built = _event_step(event)
        elif span.operation == A.OP_EXECUTE_TOOL:
            built = _tool_step(span)
        elif span.operation in _MODEL_OPERATIONS and not A.seatrial_call(span.attributes):
            built = _model_step(span)  # a simulated user's calls are not the agent's steps
        else:
            built = None  # the invoke_agent root, and spans that are no step
        if built is None:
            continue
        if step_turn is not None:
            reply_until(step_turn)
        kind, label, key, detail = built
        steps.append(Step(len(steps), kind, step_turn, label, key, span.span_id, detail))
    reply_until(len(responses))
    return steps


def models_of(steps: Sequence[Step]) -> list[str]:
    """The model names the model calls used, in first-use order."""
    seen: dict[str, None] = {}
    for step in steps:
        if step.kind == "model_call" and step.detail.get("model"):
            seen.setdefault(str(step.detail["model"]), None)
    return list(seen)
