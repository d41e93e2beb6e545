"""Attempts adopt the spans their agent exported before they were stored.

An agent instrumented with OpenTelemetry continues the attempt's trace (the HTTP adapter
sends a ``traceparent`` header) and exports its spans while the attempt runs, so the
receiver usually stores them before the attempt exists: as a production trace with the
attempt's trace id. When the attempt is stored, in the same transaction, those spans move
to the attempt: appended after its own spans (a span id it already has is skipped) and
deleted from the production traces, summary row included. Spans that arrive later join the
attempt in :meth:`~seatrial.store.Store.save_ingested`, after these.

Nothing to adopt (the usual case) costs one primary-key lookup of the batch's trace ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from seatrial.store._bulk import insert_many
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS, span_dict, span_row
from seatrial.store._schema import spans, trace_spans
from seatrial.store._schema import traces as trace_rows
from seatrial.store._trace_rows import fresh_spans
from seatrial.store._traces import _PG_INGEST_LOCK, _chunks, stored_trace_ids
from seatrial.trace import Span

_ATTEMPT_ID = ATTEMPT_COLUMNS.index("id")
_ATTEMPT_TRACE_ID = ATTEMPT_COLUMNS.index("trace_id")
_SPAN_ATTEMPT_ID = SPAN_COLUMNS.index("attempt_id")
_SPAN_POSITION = SPAN_COLUMNS.index("position")
_SPAN_ID = SPAN_COLUMNS.index("span_id")


def adopt_exported_spans(
    connection: Connection,
    attempt_rows: Sequence[tuple[Any, ...]],
    span_rows: Sequence[tuple[Any, ...]],
) -> int:
    """Move stored production spans with these attempts' trace ids onto the attempts.

    ``attempt_rows`` and ``span_rows`` are the rows just inserted in this transaction (the
    store's ATTEMPT_COLUMNS and SPAN_COLUMNS). Returns how many spans were adopted.
    """
    owners: dict[str, str] = {}
    for row in attempt_rows:
        trace_id = row[_ATTEMPT_TRACE_ID]
        if trace_id is not None:
            owners[trace_id] = row[_ATTEMPT_ID]
    if not owners:
        return 0
    if connection.dialect.name == "postgresql":
        # The ingest writer's lock: a batch of spans committed while this transaction ran
        # is seen here, or this transaction's attempts are seen by it (SQLite's writer lock
        # gives the same order).
        connection.exec_driver_sql("SELECT pg_advisory_xact_lock(%s)", (_PG_INGEST_LOCK,))
    found = stored_trace_ids(connection, list(owners))
    if not found:
        return 0
    exported = _stored_spans(connection, found)
    adopters = {owners[trace_id]: trace_id for trace_id in found}
    own = _own_spans(span_rows, adopters)
    rows: list[tuple[Any, ...]] = []
    for attempt_id, trace_id in adopters.items():
        seen, next_position = own.get(attempt_id, (set(), 0))
        rows.extend(
            span_row(attempt_id, span, position)
            for position, span in enumerate(
                fresh_spans(exported.get(trace_id, []), seen), start=next_position
            )
        )
    insert_many(connection, spans, SPAN_COLUMNS, rows)
    for chunk in _chunks(found):
        connection.execute(delete(trace_spans).where(trace_spans.c.trace_id.in_(chunk)))
        connection.execute(delete(trace_rows).where(trace_rows.c.trace_id.in_(chunk)))
    return len(rows)


def _stored_spans(connection: Connection, trace_ids: list[str]) -> dict[str, list[Span]]:
    """Trace id -> its stored production spans, in start order (as ``ingested_trace``)."""
    found: dict[str, list[Span]] = {}
    for chunk in _chunks(trace_ids):
        rows = connection.execute(
            select(trace_spans)
            .where(trace_spans.c.trace_id.in_(chunk))
            .order_by(
                trace_spans.c.trace_id,
                trace_spans.c.start_time_unix_nano,
                trace_spans.c.position,
            )
        ).mappings()
        for row in rows:
            found.setdefault(row["trace_id"], []).append(Span.model_validate(span_dict(row)))
    return found


def _own_spans(
    span_rows: Sequence[tuple[Any, ...]], attempt_ids: Mapping[str, str]
) -> dict[str, tuple[set[str], int]]:
    """Per adopting attempt: the span ids it was stored with and the next free position."""
    own: dict[str, tuple[set[str], int]] = {}
    for row in span_rows:
        attempt_id = row[_SPAN_ATTEMPT_ID]
        if attempt_id in attempt_ids:
            seen, next_position = own.get(attempt_id, (set(), 0))
            seen.add(row[_SPAN_ID])
            own[attempt_id] = (seen, max(next_position, row[_SPAN_POSITION] + 1))
    return own
