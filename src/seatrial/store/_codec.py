"""Records to rows and back: RunInfo, Case, AttemptRecord (with its Trace) and spans.

Attempts and spans become tuples for ``executemany`` inserts, with JSON columns serialised
straight from the models; rows come back as one dict per record, validated once. No ORM
objects: the runner writes thousands of attempts a second.
"""

from __future__ import annotations

import gc
import os
import random
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticSerializationError

from seatrial.case import Case
from seatrial.errors import StoreError
from seatrial.i18n import gettext as _
from seatrial.record import AssertionResult, AttemptRecord, RunInfo
from seatrial.store._engine import RawJSON, raw_json, without_nul
from seatrial.trace import Span, SpanLink, Trace

_IDS = random.Random()
"""Ids (trace, span, session, attempt) come from a generator of their own, seeded by the
operating system (again in every forked worker): an in-process agent or a library that seeds
the ``random`` module would otherwise make them repeat."""
os.register_at_fork(after_in_child=_IDS.seed)

Row = dict[str, Any]


def run_row(info: RunInfo) -> Row:
    """The ``runs`` row of a run header (its tags go to ``run_tags``)."""
    return info.model_dump(mode="json", exclude={"tags"})


def tag_rows(info: RunInfo) -> list[Row]:
    """The ``run_tags`` rows of a run, in the order given."""
    return [
        {"run_id": info.run_id, "position": position, "tag": tag}
        for position, tag in enumerate(info.tags)
    ]


def run_info(row: Mapping[Any, Any], tags: list[str]) -> RunInfo:
    """The run header from its ``runs`` row and tags."""
    return RunInfo.model_validate({**row, "tags": tags})


def case_rows(run_id: str, cases: Sequence[Case]) -> list[Row]:
    """The ``run_cases`` rows: each case as run, in suite order."""
    return [
        {
            "run_id": run_id,
            "case_id": case.id,
            "position": position,
            "category": case.category,
            "priority": case.priority,
            "definition": case.model_dump(mode="json"),
        }
        for position, case in enumerate(cases)
    ]


def case_of(definition: Mapping[Any, Any]) -> Case:
    """The case back from its stored definition."""
    return Case.model_validate(definition)


def new_attempt_id() -> str:
    """A new attempt key: 32 hex digits, the clock's nanoseconds then 64 random bits.

    Made here rather than by the database, so spans need no round-trip for it; ordered by
    time, so inserts land at the end of the primary-key index instead of all over it.
    """
    return f"{time.time_ns():016x}{_IDS.getrandbits(64):016x}"


ATTEMPT_COLUMNS = (
    "id",
    "run_id",
    "case_id",
    "attempt",
    "verdict",
    "failure_type",
    "reason",
    "score",
    "tool_calls",
    "model_calls",
    "wall_time_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "response",
    "responses",
    "final_state",
    "error",
    "user_id",
    "session_id",
    "started_at",
    "finished_at",
    "trace_id",
    "assertions",
    "format_version",
    "snapshot",
    "message",
)
"""The ``attempts`` columns, in the order of the tuples :func:`attempt_rows` makes."""

SPAN_COLUMNS = (
    "attempt_id",
    "position",
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "attributes",
    "events",
    "status",
    "status_message",
)
"""The ``spans`` columns, in the order of the tuples :func:`attempt_rows` makes."""


def attempt_rows(
    records: Iterable[AttemptRecord],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ``attempts`` rows and the ``spans`` rows of a batch, as tuples (see *_COLUMNS).

    Fields are read straight off the models and JSON columns serialised from them in one
    step (:func:`raw_json`): dumping each record to dicts first costs more than the inserts.
    Tuples of plain values are cheap to make and soon untracked by the garbage collector.
    """
    attempt_out: list[tuple[Any, ...]] = []
    span_out: list[tuple[Any, ...]] = []
    for record in records:
        attempt_id = new_attempt_id()
        # Read from the instance's dict: a pydantic model's attributes go through its
        # __getattr__ hook (several times the cost of a dict lookup), 30 of them an attempt.
        fields = record.__dict__
        metrics = fields["metrics"].__dict__
        trace = fields["trace"]
        final_state, error, snapshot = fields["final_state"], fields["error"], fields["snapshot"]
        said = fields["message"]
        attempt_out.append(
            (
                attempt_id,
                fields["run_id"],
                fields["case_id"],
                fields["attempt"],
                fields["verdict"],
                fields["failure_type"],
                without_nul(fields["reason"]),
                fields["score"],
                metrics["tool_calls"],
                metrics["model_calls"],
                metrics["wall_time_ms"],
                metrics["input_tokens"],
                metrics["output_tokens"],
                metrics["cost_usd"],
                without_nul(fields["response"]),
                raw_json(fields["responses"]),
                None if final_state is None else raw_json(final_state),
                None if error is None else without_nul(error),
                fields["user_id"],
                fields["session_id"],
                fields["started_at"],
                fields["finished_at"],
                None if trace is None else trace.trace_id,
                assertions_json(fields["assertions"]),
                fields["format_version"],
                None if snapshot is None else raw_json(snapshot),
                None if said is None else raw_json(said),
            )
        )
        if trace is None:
            continue
        span_out.extend(span_row(attempt_id, span, p) for p, span in enumerate(trace.spans))
    return attempt_out, span_out


_RESULT_JSON: dict[tuple[Any, ...], str] = {}
"""The JSON text of assertion results already encoded, by their field values: most results
of a run repeat (the same check passing for the same reason), and pydantic's serialiser
spends more on a result's nine fields than looking them up costs."""
_RESULT_JSON_LIMIT = 4096
"""Entries kept at most; the table starts again empty past it (a run of unique reasons)."""


def assertions_json(results: list[AssertionResult]) -> RawJSON:
    """The ``assertions`` column: ``raw_json(results)``, each result encoded once per text.

    Only results whose values cannot compare equal to a differently written value are
    looked up (a bool ``must_pass``, a non-zero float ``weight``, no ``score``): ``1 == 1.0``
    and ``0.0 == -0.0`` in Python, but their JSON differs.
    """
    parts: list[str] = []
    for result in results:
        fields = result.__dict__
        weight = fields["weight"]
        if not (
            fields["score"] is None
            and type(weight) is float
            and weight
            and type(fields["must_pass"]) is bool
        ):
            parts.append(raw_json(result))
            continue
        if fields["message"] is not None:
            # A message (nested dicts) costs more to key than to encode: encoded each time.
            parts.append(raw_json(result))
            continue
        key = tuple(fields.values())
        text = _RESULT_JSON.get(key)
        if text is None:
            if len(_RESULT_JSON) >= _RESULT_JSON_LIMIT:
                _RESULT_JSON.clear()
            text = _RESULT_JSON[key] = raw_json(result)
        parts.append(text)
    return RawJSON(f"[{','.join(parts)}]")


NO_EVENTS = raw_json([])
"""Most spans have no events: their column's text is made once."""


def span_row(attempt_id: str, span: Span, position: int) -> tuple[Any, ...]:
    """The ``spans`` row of one span of an attempt's trace (see SPAN_COLUMNS): the attempt's
    own spans, and spans its agent exported that join them (ingestion)."""
    fields = span.__dict__  # one attribute read, not eleven (see attempt_rows)
    events = fields["events"]
    return (
        attempt_id,
        position,
        fields["trace_id"],
        fields["span_id"],
        fields["parent_span_id"],
        without_nul(fields["name"]),
        fields["start_time_unix_nano"],
        fields["end_time_unix_nano"],
        _stored_attributes(fields["attributes"], fields["links"]),
        raw_json(events) if events else NO_EVENTS,
        fields["status"],
        without_nul(fields["status_message"]),
    )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large result is turned into records.

    Reading a big run creates hundreds of thousands of objects that all stay alive; each
    time their number grows by a quarter CPython scans every one of them, which takes
    longer than reading and validating them (a 10,000-attempt run with traces: 1.8 s with
    the scans, 0.6 s without). Nothing built here forms a cycle, so nothing is missed.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


ATTEMPT_FIELDS = (
    "run_id",
    "case_id",
    "attempt",
    "verdict",
    "failure_type",
    "reason",
    "score",
    "response",
    "responses",
    "final_state",
    "error",
    "user_id",
    "session_id",
    "started_at",
    "finished_at",
    "assertions",
    "format_version",
    "snapshot",
    "message",
)
METRIC_FIELDS = (
    "tool_calls",
    "model_calls",
    "wall_time_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
LINKS_KEY = "seatrial.links"
"""Where a span's links live in its stored attributes (JSON): the span tables have no column
of their own for them. Taken back out when the span is read (:func:`span_dict`)."""
SPAN_FIELDS = tuple(name for name in Span.model_fields if name != "links")


def stored_attributes(span: Span) -> Any:
    """The span's attributes as stored: its links, when it has any, under :data:`LINKS_KEY`."""
    return _stored_attributes(span.attributes, span.links)


def _stored_attributes(attributes: dict[str, Any], links: list[SpanLink]) -> Any:
    if not links:
        return raw_json(attributes)
    dumped = [link.model_dump(mode="json") for link in links]
    return raw_json({**attributes, LINKS_KEY: dumped})


def attempt_record(row: Mapping[Any, Any], spans: list[Row] | None) -> AttemptRecord:
    """The attempt back from its row; with ``spans`` (maybe empty) its trace too."""
    data: Row = {name: row[name] for name in ATTEMPT_FIELDS}
    data["metrics"] = {name: row[name] for name in METRIC_FIELDS}
    if spans is not None and row["trace_id"] is not None:
        data["trace"] = {"trace_id": row["trace_id"], "spans": spans}
    return AttemptRecord.model_validate(data)


def span_dict(row: Mapping[Any, Any]) -> Row:
    """A span's fields from its ``spans`` row (validated with its attempt)."""
    span = {name: row[name] for name in SPAN_FIELDS}
    attributes = span["attributes"]
    if isinstance(attributes, dict) and LINKS_KEY in attributes:
        span["attributes"] = {k: v for k, v in attributes.items() if k != LINKS_KEY}
        span["links"] = attributes[LINKS_KEY]
    return span


def trace_of(trace_id: str, span_rows: Iterable[Mapping[Any, Any]]) -> Trace:
    """A trace from its id and its span rows in stored order."""
    return Trace.model_validate({"trace_id": trace_id, "spans": [span_dict(r) for r in span_rows]})


@dataclass(frozen=True)
class EncodedAttempts:
    """Attempts turned into table rows, ready for :meth:`Store.save_encoded`."""

    run_ids: frozenset[str]
    attempt_rows: list[tuple[Any, ...]]
    span_rows: list[tuple[Any, ...]]


def encode_attempts(records: Sequence[AttemptRecord]) -> EncodedAttempts:
    """Turn attempts into rows (CPU work only, no database); StoreError if one is not JSON."""
    try:
        attempts, spans = attempt_rows(records)
    except PydanticSerializationError as exc:
        raise StoreError(
            _(
                "cannot store {count} attempts: a value in one of them is not JSON "
                "({exc}); give final_state and span attributes JSON values"
            ).format(count=len(records), exc=exc)
        ) from exc
    return EncodedAttempts(frozenset(r.run_id for r in records), attempts, spans)
