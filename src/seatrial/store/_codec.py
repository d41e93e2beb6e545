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
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store._engine import raw_json, without_nul
from seatrial.trace import Span, Trace

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
        metrics = record.metrics
        trace = record.trace
        attempt_out.append(
            (
                attempt_id,
                record.run_id,
                record.case_id,
                record.attempt,
                record.verdict,
                record.failure_type,
                without_nul(record.reason),
                record.score,
                metrics.tool_calls,
                metrics.model_calls,
                metrics.wall_time_ms,
                metrics.input_tokens,
                metrics.output_tokens,
                metrics.cost_usd,
                without_nul(record.response),
                raw_json(record.responses),
                None if record.final_state is None else raw_json(record.final_state),
                None if record.error is None else without_nul(record.error),
                record.user_id,
                record.session_id,
                record.started_at,
                record.finished_at,
                None if trace is None else trace.trace_id,
                raw_json(record.assertions),
                record.format_version,
                None if record.snapshot is None else raw_json(record.snapshot),
            )
        )
        if trace is None:
            continue
        span_out.extend(span_row(attempt_id, span, p) for p, span in enumerate(trace.spans))
    return attempt_out, span_out


NO_EVENTS = raw_json([])
"""Most spans have no events: their column's text is made once."""


def span_row(attempt_id: str, span: Span, position: int) -> tuple[Any, ...]:
    """The ``spans`` row of one span of an attempt's trace (see SPAN_COLUMNS): the attempt's
    own spans, and spans its agent exported that join them (ingestion)."""
    return (
        attempt_id,
        position,
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        without_nul(span.name),
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        stored_attributes(span),
        raw_json(span.events) if span.events else NO_EVENTS,
        span.status,
        without_nul(span.status_message),
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
    if not span.links:
        return raw_json(span.attributes)
    links = [link.model_dump(mode="json") for link in span.links]
    return raw_json({**span.attributes, LINKS_KEY: links})


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
            f"cannot store {len(records)} attempts: a value in one of them is not JSON "
            f"({exc}); give final_state and span attributes JSON values"
        ) from exc
    return EncodedAttempts(frozenset(r.run_id for r in records), attempts, spans)
