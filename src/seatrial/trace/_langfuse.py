"""Langfuse trace exports as Seatrial traces.

Read: the public API's ``GET /api/public/traces/{traceId}`` body (a trace with its
``observations`` and ``scores``), a list of those or JSONL with one per line, and
``GET /api/public/observations`` pages (``{"data": [observation, ...]}``) and v2's
``GET /api/public/v2/observations`` pages (whose observations repeat the trace's ``sessionId``,
``userId`` and ``environment``, and name the model ``providedModelName``), grouped by
``traceId``. An observation is ``{id, traceId, type, name, startTime, endTime,
parentObservationId, model, modelParameters, input, output, usage | usageDetails, level,
statusMessage, metadata, ...}``; ``type`` is GENERATION, SPAN or EVENT, and in Langfuse v3
also AGENT, TOOL, CHAIN, RETRIEVER, EMBEDDING, EVALUATOR or GUARDRAIL.

Mapped onto GenAI spans:

- the trace itself becomes the root span (``invoke_agent`` unless an AGENT observation sits
  at the top), carrying ``sessionId`` as ``gen_ai.conversation.id``, ``userId`` as
  ``user.id`` and the trace's input and output as messages; its scores become
  ``langfuse.score`` events;
- GENERATION: ``chat`` with the model, token usage (``usageDetails`` input/output, else
  ``usage``, else ``promptTokens``/``completionTokens``), cost, temperature and max tokens,
  and the OpenAI-style input and output as ``gen_ai.input.messages``/``output.messages``;
- TOOL: ``execute_tool`` (name, input as arguments, output as result). A tool call a
  generation asked for without a TOOL observation (Langfuse v2, where tools were rarely
  traced) becomes an ``execute_tool`` span when the trace is normalized, as for every format
  (:mod:`seatrial.trace._message_tools`);
- AGENT: ``invoke_agent``; RETRIEVER ``retrieval``; EMBEDDING ``embeddings``; SPAN, CHAIN,
  EVALUATOR, GUARDRAIL: plain spans; EVENT: a span event on its parent;
- ``level: ERROR`` is an error status with ``statusMessage`` as its message.

Everything else is kept under ``langfuse.trace.*`` / ``langfuse.observation.*``
(objects as JSON text). Ids written as UUIDs lose their dashes so they read as OTel hex ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from seatrial.i18n import gettext as _
from seatrial.trace import _attrs as A
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._langfuse_messages import json_text, mapping, put_messages
from seatrial.trace._span import Span, SpanEvent, Trace
from seatrial.trace._time import to_unix_nanos
from seatrial.trace._tools_called import TOOL_ERROR, encode_json

FORMAT = "langfuse"

_OPERATION_OF_TYPE = {
    "GENERATION": A.OP_CHAT,
    "TOOL": A.OP_EXECUTE_TOOL,
    "AGENT": A.OP_INVOKE_AGENT,
    "RETRIEVER": A.OP_RETRIEVAL,
    "EMBEDDING": A.OP_EMBEDDINGS,
}
_TRACE_FIELDS_OF_OBSERVATIONS = ("sessionId", "userId", "environment")
"""Trace fields an observations export carries on each observation; they go on the root."""
_MAPPED_TRACE_FIELDS = frozenset(
    {"id", "timestamp", "name", "input", "output", "sessionId", "userId", "observations"}
    | {"scores"}
)
_MAPPED_FIELDS = frozenset(
    {"id", "traceId", "type", "name", "startTime", "endTime", "parentObservationId", "model"}
    | {"input", "output", "usage", "usageDetails", "level", "statusMessage", "modelParameters"}
    | {"promptTokens", "completionTokens", "calculatedTotalCost", "costDetails", "totalCost"}
    | {"inputUsage", "outputUsage", "providedModelName"}
    | set(_TRACE_FIELDS_OF_OBSERVATIONS)
)
_PARAMETERS = {
    "temperature": A.REQUEST_TEMPERATURE,
    "max_tokens": A.REQUEST_MAX_TOKENS,
    "top_p": A.REQUEST_TOP_P,
}


def matches(data: Any) -> bool:
    """Whether ``data`` is a Langfuse trace (or a list of them) or an observations page."""
    records = _records(data)
    if not records or not isinstance(records[0], Mapping):
        return False
    first = records[0]
    if isinstance(first.get("observations"), list) and "id" in first:
        return "timestamp" in first or "htmlPath" in first or "sessionId" in first
    return _is_observation(first)


def read(data: Any) -> list[Trace]:
    """The traces of a Langfuse export, in the order they appear."""
    traces: dict[str, Trace] = {}
    loose: dict[str, list[Mapping[str, Any]]] = {}
    for index, record in enumerate(_records(data)):
        where = f"[{index}]"
        if not isinstance(record, Mapping):
            raise TraceFormatError(
                _("{where}: expected a trace or observation object").format(where=where)
            )
        if isinstance(record.get("observations"), list):
            trace = _trace(record, record["observations"], where)
            traces[trace.trace_id] = trace
        elif _is_observation(record):
            loose.setdefault(_id(record.get("traceId")) or "", []).append(record)
        else:
            raise TraceFormatError(
                _("{where}: expected `observations` or `traceId` and `type`").format(where=where)
            )
    for trace_id, observations in loose.items():
        if not trace_id:
            raise TraceFormatError(_("an observation without `traceId` cannot join a trace"))
        traces[trace_id] = _trace(_trace_of(trace_id, observations), observations, "observations")
    return list(traces.values())


def _trace_of(trace_id: str, observations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The trace fields an observations export repeats on each observation (v2's
    ``GET /api/public/v2/observations``: ``sessionId``, ``userId``, ``environment``), from the
    first observation that has each."""
    record: dict[str, Any] = {"id": trace_id}
    for key in _TRACE_FIELDS_OF_OBSERVATIONS:
        value = next((o[key] for o in observations if o.get(key) not in (None, "")), None)
        if value is not None:
            record[key] = value
    return record


def _records(data: Any) -> list[Any]:
    if isinstance(data, Mapping):
        page = data.get("data")
        return page if isinstance(page, list) and "meta" in data else [data]
    return data if isinstance(data, list) else []


def _is_observation(record: Mapping[str, Any]) -> bool:
    return "traceId" in record and "type" in record and "startTime" in record


def _id(value: Any) -> str | None:
    """A Langfuse id as an OTel-style id: UUIDs lose their dashes, hex is lower-cased."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    bare = text.replace("-", "")
    if len(text) == 36 and len(bare) == 32 and all(c in "0123456789abcdefABCDEF" for c in bare):
        return bare.lower()
    return text


def _trace(record: Mapping[str, Any], observations: Sequence[Any], where: str) -> Trace:
    trace_id = _id(record.get("id"))
    if trace_id is None:
        raise TraceFormatError(_("{where}.id: a trace needs an id").format(where=where))
    spans: list[Span] = []
    events: dict[str | None, list[SpanEvent]] = {}
    for index, raw in enumerate(observations):
        at = f"{where}.observations[{index}]"
        if not isinstance(raw, Mapping):
            raise TraceFormatError(_("{at}: expected an observation object").format(at=at))
        if str(raw.get("type", "")).upper() == "EVENT":
            event = _event(raw, at)
            events.setdefault(_id(raw.get("parentObservationId")), []).append(event)
        else:
            spans.append(_observation(raw, trace_id, at))
    root = _root_span(record, trace_id, spans, where)
    for span in spans:
        if span.parent_span_id is None:
            span.parent_span_id = root.span_id
    spans.insert(0, root)
    by_id = {span.span_id: span for span in spans}
    for parent_id, found in events.items():
        owner = by_id.get(parent_id or "", root)
        owner.events = sorted([*owner.events, *found], key=lambda e: e.time_unix_nano)
    resource = {}
    if record.get("environment"):
        resource["deployment.environment.name"] = str(record["environment"])
    return Trace(
        trace_id=trace_id,
        spans=sorted(spans, key=lambda s: s.start_time_unix_nano),
        resource=resource,
    )


def _root_span(record: Mapping[str, Any], trace_id: str, spans: Sequence[Span], where: str) -> Span:
    tops = [s for s in spans if s.parent_span_id is None]
    start = to_unix_nanos(record.get("timestamp"))
    if start is None:
        if not spans:
            raise TraceFormatError(
                _("{where}.timestamp: expected an ISO 8601 time").format(where=where)
            )
        start = min(s.start_time_unix_nano for s in spans)
    ends = [s.end_time_unix_nano or s.start_time_unix_nano for s in spans]
    latency = record.get("latency")
    if isinstance(latency, int | float) and not isinstance(latency, bool):
        ends.append(start + int(latency * 1e9))
    attrs: dict[str, Any] = {}
    if not any(s.operation == A.OP_INVOKE_AGENT for s in tops):
        attrs[A.OPERATION] = A.OP_INVOKE_AGENT
    name = str(record.get("name") or "")
    if name and A.OPERATION in attrs:
        attrs[A.AGENT_NAME] = name
    _put(attrs, A.CONVERSATION_ID, record.get("sessionId"))
    _put(attrs, A.USER_ID, record.get("userId"))
    put_messages(attrs, A.INPUT_MESSAGES, record.get("input"), "user", "langfuse.trace.input")
    put_messages(
        attrs, A.OUTPUT_MESSAGES, record.get("output"), "assistant", "langfuse.trace.output"
    )
    _keep(attrs, record, _MAPPED_TRACE_FIELDS, "langfuse.trace.")
    scores = [
        SpanEvent(
            name="langfuse.score",
            time_unix_nano=to_unix_nanos(score.get("timestamp")) or start,
            attributes={
                f"langfuse.score.{key}": _plain(value)
                for key, value in score.items()
                if value is not None and key in ("name", "value", "stringValue", "comment")
            },
        )
        for score in record.get("scores") or []
        if isinstance(score, Mapping)
    ]
    span_id = hashlib.sha256(f"langfuse-trace:{trace_id}".encode()).hexdigest()[:16]
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        name=name or "langfuse trace",
        start_time_unix_nano=start,
        end_time_unix_nano=max([start, *ends]),
        attributes=attrs,
        events=scores,
    )


def _observation(raw: Mapping[str, Any], trace_id: str, where: str) -> Span:
    span_id = _id(raw.get("id"))
    start = to_unix_nanos(raw.get("startTime"))
    if span_id is None or start is None:
        raise TraceFormatError(
            _("{where}: needs an `id` and `startTime` (ISO 8601)").format(where=where)
        )
    kind = str(raw.get("type") or "SPAN").upper()
    operation = _OPERATION_OF_TYPE.get(kind)
    attrs: dict[str, Any] = {"langfuse.observation.type": kind}
    _put(attrs, A.OPERATION, operation)
    name = str(raw.get("name") or "")
    error = str(raw.get("level") or "").upper() == "ERROR"
    if operation == A.OP_CHAT:
        _generation(attrs, raw)
    elif operation == A.OP_EXECUTE_TOOL:
        _put(attrs, A.TOOL_NAME, name)
        _put(attrs, A.TOOL_ARGUMENTS, json_text(raw.get("input")))
        _put(attrs, A.TOOL_RESULT, json_text(raw.get("output")))
        if error:
            attrs[A.ERROR_TYPE] = TOOL_ERROR
    else:
        if operation == A.OP_INVOKE_AGENT:
            _put(attrs, A.AGENT_NAME, name)
        _put(attrs, "langfuse.observation.input", json_text(raw.get("input")))
        _put(attrs, "langfuse.observation.output", json_text(raw.get("output")))
    _level(attrs, raw, error)
    _keep(attrs, raw, _MAPPED_FIELDS, "langfuse.observation.")
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=_id(raw.get("parentObservationId")),
        name=name or f"{operation or kind.lower()} {attrs.get(A.REQUEST_MODEL, '')}".strip(),
        start_time_unix_nano=start,
        end_time_unix_nano=to_unix_nanos(raw.get("endTime")),
        attributes=attrs,
        status="error" if error else "unset",
        status_message=str(raw.get("statusMessage") or "") if error else "",
    )


def _generation(attrs: dict[str, Any], raw: Mapping[str, Any]) -> None:
    # v2's observations API names the model the application sent `providedModelName`.
    model = raw.get("model") or raw.get("providedModelName")
    _put(attrs, A.REQUEST_MODEL, model)
    _put(attrs, A.RESPONSE_MODEL, model)
    parameters = raw.get("modelParameters")
    if isinstance(parameters, Mapping):
        for key, target in _PARAMETERS.items():
            value = _number(parameters.get(key))
            _put(attrs, target, value)
        attrs["langfuse.observation.modelParameters"] = encode_json(parameters)
    details = mapping(raw.get("usageDetails"))
    usage = mapping(raw.get("usage"))
    tokens_in = _first_int(
        details.get("input"),
        details.get("prompt_tokens"),
        usage.get("input"),
        raw.get("inputUsage"),
        raw.get("promptTokens"),
    )
    tokens_out = _first_int(
        details.get("output"),
        details.get("completion_tokens"),
        usage.get("output"),
        raw.get("outputUsage"),
        raw.get("completionTokens"),
    )
    _put(attrs, A.INPUT_TOKENS, tokens_in)
    _put(attrs, A.OUTPUT_TOKENS, tokens_out)
    costs = mapping(raw.get("costDetails"))
    cost = _number(raw.get("calculatedTotalCost"))
    cost = cost if cost is not None else _number(costs.get("total"))
    cost = cost if cost is not None else _number(raw.get("totalCost"))
    _put(attrs, A.COST_USD, cost)
    put_messages(attrs, A.INPUT_MESSAGES, raw.get("input"), "user", "langfuse.observation.input")
    put_messages(
        attrs, A.OUTPUT_MESSAGES, raw.get("output"), "assistant", "langfuse.observation.output"
    )


def _event(raw: Mapping[str, Any], where: str) -> SpanEvent:
    at = to_unix_nanos(raw.get("startTime"))
    if at is None:
        raise TraceFormatError(
            _("{where}.startTime: expected an ISO 8601 time").format(where=where)
        )
    attrs: dict[str, Any] = {}
    _put(attrs, "langfuse.observation.input", json_text(raw.get("input")))
    _put(attrs, "langfuse.observation.output", json_text(raw.get("output")))
    _level(attrs, raw, error=False)
    _keep(attrs, raw, _MAPPED_FIELDS, "langfuse.observation.")
    return SpanEvent(
        name=str(raw.get("name") or "langfuse.event"), time_unix_nano=at, attributes=attrs
    )


# Small helpers ---------------------------------------------------------------------------


def _level(attrs: dict[str, Any], raw: Mapping[str, Any], error: bool) -> None:
    """A level other than DEFAULT is kept (an ERROR is also the span's status), and so is
    the status message of anything that is not an error status."""
    level = str(raw.get("level") or "").upper()
    if level and level != "DEFAULT":
        attrs["langfuse.observation.level"] = level
    if not error:
        _put(attrs, "langfuse.observation.statusMessage", raw.get("statusMessage"))


def _put(attrs: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != "":
        attrs[key] = value


def _keep(
    attrs: dict[str, Any], raw: Mapping[str, Any], mapped: frozenset[str], prefix: str
) -> None:
    """Every field not mapped above, under ``prefix``: unknown data is kept, not dropped."""
    for key, value in raw.items():
        if key not in mapped and value is not None:
            attrs.setdefault(f"{prefix}{key}", _plain(value))


def _plain(value: Any) -> Any:
    """An attribute value: scalars and lists of strings as they are, the rest as JSON."""
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return encode_json(value)


def _number(value: Any) -> float | int | None:
    """A number, also when written as text (Langfuse v2 stored model parameters as text)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
        return int(value) if value.is_integer() else value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _first_int(*values: Any) -> int | None:
    for value in values:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return None
