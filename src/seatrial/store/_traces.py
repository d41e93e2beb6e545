"""The store's ingested production traces: masked spans grouped by trace, and their reads.

Spans come in batches (one OTLP request, one exported file) and a trace may arrive over
several of them: each batch is written in one transaction, its spans appended after the
trace's stored ones, a span already stored (same trace id and span id: an exporter's retry)
skipped, and the trace's summary row (``traces``, what the browser lists and filters on)
brought up to date from the new spans alone. A span whose trace id is an attempt's joins
that attempt's spans instead: an agent that exports its own spans during a run adds them to
the attempt's trace.

The traces handed in are already masked (:func:`seatrial.dataset.ingest_traces`): nothing
here sees a raw value.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import ColumnElement, TextClause, bindparam, select, text, update
from sqlalchemy.engine import Connection, Engine

from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.store._bulk import insert_many
from seatrial.store._codec import SPAN_COLUMNS, span_dict, span_row
from seatrial.store._engine import raw_json
from seatrial.store._schema import spans, trace_spans
from seatrial.store._schema import traces as trace_rows
from seatrial.store._trace_records import (
    IngestOutcome,
    TraceCheck,
    TraceHead,
    TraceQuery,
    trace_head_of,
)
from seatrial.store._trace_rows import (
    TRACE_COLUMNS,
    TRACE_SPAN_COLUMNS,
    Summary,
    fresh_spans,
    group_spans,
    summarize,
    trace_span_row,
)
from seatrial.store._translate import translated
from seatrial.store._url import mask_url
from seatrial.trace import Span, Trace

_CHUNK = 500
"""Ids per ``IN (...)`` list: far below SQLite's and PostgreSQL's parameter limits."""

# Any fixed 64-bit number: ingest writes to PostgreSQL take it for their transaction, so
# two batches of one trace never pick the same positions (SQLite's writer lock does this).
_PG_INGEST_LOCK = 0x5EA7_21A1_0000_0005


class TracesMixin:
    """Store methods for ingested traces (``seatrial ingest``, the OTLP receiver)."""

    # Set by Store.__init__; declared here so the methods type-check on their own.
    _engine: Engine
    _writer: Engine

    def save_ingested(
        self,
        traces: Sequence[Trace],
        *,
        source: str,
        masked: Mapping[str, Mapping[str, int]] | None = None,
    ) -> IngestOutcome:
        """Store already-masked traces in one transaction; see the module docstring.

        ``masked`` maps a trace id to the values masked in it per kind, added to the
        trace's summary. Either the whole batch is stored or none of it is.
        """
        grouped = group_spans(traces)
        masked = masked or {}
        totals: dict[str, int] = {}
        for counts in masked.values():
            for kind, count in counts.items():
                totals[kind] = totals.get(kind, 0) + count
        if not grouped:
            return IngestOutcome(0, 0, 0, 0, totals)
        span_total = sum(len(spans_of) for spans_of, _ in grouped.values())
        with self._ingest_write(
            _("store {span_total} ingested spans from {source}").format(
                span_total=span_total, source=source
            )
        ) as c:
            if c.dialect.name == "postgresql":
                c.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_INGEST_LOCK})
            owners = _attempt_owners(c, list(grouped))
            joined_spans, duplicates = _join_attempts(c, grouped, owners)
            stored, more_duplicates = self._store_traces(
                c,
                {k: v for k, v in grouped.items() if k not in owners},
                source=source,
                masked=masked,
            )
        return IngestOutcome(
            traces=len(grouped) - len(owners),
            spans=joined_spans + stored,
            joined_attempts=len(owners),
            duplicate_spans=duplicates + more_duplicates,
            masked=totals,
        )

    def trace_heads(self, query: TraceQuery) -> list[TraceHead]:
        """Summaries of the stored traces ``query`` selects, newest first."""
        where = self._trace_filters(query)
        statement = (
            select(trace_rows)
            .where(*where)
            .order_by(trace_rows.c.started_at.desc(), trace_rows.c.trace_id)
            .limit(query.limit)
            .offset(query.offset)
        )
        with self._ingest_read(_("list ingested traces")) as connection:
            rows = connection.execute(statement).mappings().all()
        return [trace_head_of(row) for row in rows]

    def trace_head(self, trace_id: str) -> TraceHead:
        """The summary of one stored trace (InputError when the store lacks it)."""
        with self._ingest_read(
            _("read ingested trace {trace_id}").format(trace_id=repr(trace_id))
        ) as connection:
            row = connection.execute(select(trace_rows).where(trace_rows.c.trace_id == trace_id))
            found = row.mappings().first()
        if found is None:
            raise self._no_trace(trace_id)
        return trace_head_of(found)

    def ingested_trace(self, trace_id: str) -> Trace:
        """A stored production trace with its resource, spans in start order."""
        with self._ingest_read(
            _("read ingested trace {trace_id}").format(trace_id=repr(trace_id))
        ) as connection:
            head = connection.execute(
                select(trace_rows.c.resource).where(trace_rows.c.trace_id == trace_id)
            ).first()
            if head is None:
                raise self._no_trace(trace_id)
            rows = connection.execute(
                select(trace_spans)
                .where(trace_spans.c.trace_id == trace_id)
                .order_by(trace_spans.c.start_time_unix_nano, trace_spans.c.position)
            ).mappings()
            found = [Span.model_validate(span_dict(row)) for row in rows]
        return Trace(trace_id=trace_id, spans=found, resource=dict(head.resource or {}))

    def record_trace_checks(self, trace_id: str, checks: Sequence[TraceCheck]) -> None:
        """Record checks run over a stored trace; a check id run again replaces its verdict."""
        with self._ingest_write(
            _("record checks of ingested trace {trace_id}").format(trace_id=repr(trace_id))
        ) as c:
            current = c.execute(
                select(trace_rows.c.checks).where(trace_rows.c.trace_id == trace_id)
            ).first()
            if current is None:
                raise self._no_trace(trace_id)
            by_id = {str(item["id"]): item for item in current.checks or []}
            for check in checks:
                by_id[check.id] = check.model_dump(mode="json")
            c.execute(
                update(trace_rows)
                .where(trace_rows.c.trace_id == trace_id)
                .values(checks=list(by_id.values()))
            )

    def trace_check_ids(self) -> list[str]:
        """Ids of the checks that failed on some stored trace, sorted (the browser's filter)."""
        with self._ingest_read(_("list the failed checks of ingested traces")) as connection:
            if connection.dialect.name == "postgresql":
                sql = (
                    "SELECT DISTINCT item ->> 'id' FROM traces, "
                    "jsonb_array_elements(traces.checks) AS item "
                    "WHERE item ->> 'verdict' = 'fail'"
                )
            else:
                sql = (
                    "SELECT DISTINCT json_extract(item.value, '$.id') FROM traces, "
                    "json_each(traces.checks) AS item "
                    "WHERE json_extract(item.value, '$.verdict') = 'fail'"
                )
            found = connection.exec_driver_sql(sql).scalars().all()
        return sorted(str(value) for value in found if value is not None)

    # Helpers.

    def _store_traces(
        self,
        connection: Connection,
        grouped: Mapping[str, tuple[list[Span], dict[str, Any]]],
        *,
        source: str,
        masked: Mapping[str, Mapping[str, int]],
    ) -> tuple[int, int]:
        """Append spans to production traces, new or stored; (spans stored, duplicates)."""
        if not grouped:
            return 0, 0
        # Most batches hold new traces only: one primary-key lookup says so, and the stored
        # summaries are read only for the traces it finds.
        existing: dict[str, Mapping[Any, Any]] = {}
        for chunk in _chunks(stored_trace_ids(connection, list(grouped))):
            for found in connection.execute(
                select(trace_rows).where(trace_rows.c.trace_id.in_(chunk))
            ).mappings():
                existing[found["trace_id"]] = found
        known = _known_spans(
            connection,
            trace_spans.c.trace_id,
            trace_spans.c.span_id,
            trace_spans.c.position,
            list(existing),
        )
        now = time.time()
        span_rows: list[tuple[Any, ...]] = []
        new_rows: list[tuple[Any, ...]] = []
        changes: list[dict[str, Any]] = []
        duplicates = 0
        for trace_id, (batch, resource) in grouped.items():
            seen, next_position = known.get(trace_id, (set(), 0))
            fresh = fresh_spans(batch, seen)
            duplicates += len(batch) - len(fresh)
            for position, span in enumerate(fresh, start=next_position):
                span_rows.append(trace_span_row(span, position))
            summary = summarize(fresh, resource, masked.get(trace_id, {}))
            stored = existing.get(trace_id)
            if stored is None:
                new_rows.append(summary.row(trace_id, source, now))
            elif fresh or summary.masked or resource:
                changes.append(Summary.of_row(stored).merged(summary).changes(trace_id))
        insert_many(connection, trace_rows, TRACE_COLUMNS, new_rows)
        if changes:
            connection.execute(
                update(trace_rows).where(trace_rows.c.trace_id == bindparam("b_trace_id")),
                changes,
            )
        insert_many(connection, trace_spans, TRACE_SPAN_COLUMNS, span_rows)
        return len(span_rows), duplicates

    def _trace_filters(self, query: TraceQuery) -> list[ColumnElement[bool] | TextClause]:
        where: list[ColumnElement[bool] | TextClause] = []
        if query.since is not None:
            where.append(trace_rows.c.started_at >= query.since)
        if query.until is not None:
            where.append(trace_rows.c.started_at < query.until)
        if query.service is not None:
            where.append(trace_rows.c.service == query.service)
        if query.error is not None:
            where.append(trace_rows.c.error.is_(query.error))
        postgres = self._engine.dialect.name == "postgresql"
        # JSON lists: containment on PostgreSQL (jsonb @>), json_each on SQLite.
        if query.tool is not None:
            if postgres:
                where.append(
                    text("traces.tools @> CAST(:tool_json AS jsonb)").bindparams(
                        tool_json=str(raw_json([query.tool]))
                    )
                )
            else:
                where.append(
                    text(
                        "EXISTS (SELECT 1 FROM json_each(traces.tools) WHERE value = :tool)"
                    ).bindparams(tool=query.tool)
                )
        if query.failed_check is not None:
            if postgres:
                wanted = raw_json([{"id": query.failed_check, "verdict": "fail"}])
                where.append(
                    text("traces.checks @> CAST(:check_json AS jsonb)").bindparams(
                        check_json=str(wanted)
                    )
                )
            else:
                where.append(
                    text(
                        "EXISTS (SELECT 1 FROM json_each(traces.checks) "
                        "WHERE json_extract(value, '$.id') = :check_id "
                        "AND json_extract(value, '$.verdict') = 'fail')"
                    ).bindparams(check_id=query.failed_check)
                )
        return where

    def _no_trace(self, trace_id: str) -> InputError:
        return InputError(
            _(
                "no ingested trace {trace_id} in the store at {url}; the dashboard's "
                "Traces page lists the stored ones (send spans to `seatrial serve` "
                "at /v1/traces, or `seatrial ingest FILE`)"
            ).format(trace_id=repr(trace_id), url=mask_url(self._engine.url))
        )

    @contextmanager
    def _ingest_write(self, action: str) -> Iterator[Connection]:
        with (
            translated(self._engine.url, action, note=_("none of this batch was stored")),
            self._writer.begin() as connection,
        ):
            yield connection

    @contextmanager
    def _ingest_read(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._engine.connect() as connection:
            yield connection


def _chunks(ids: Sequence[str]) -> Iterator[list[str]]:
    for first in range(0, len(ids), _CHUNK):
        yield list(ids[first : first + _CHUNK])


def stored_trace_ids(connection: Connection, trace_ids: list[str]) -> list[str]:
    """Which of ``trace_ids`` are stored production traces (a primary-key lookup).

    Runs for every batch, so the SQL goes to the driver as it is: building a SQLAlchemy
    ``IN`` query for hundreds of ids costs more than the lookup itself, and PostgreSQL takes
    the ids as one array, faster than as hundreds of parameters.
    """
    return [row[0] for row in _rows_for_ids(connection, "SELECT trace_id FROM traces", trace_ids)]


def _attempt_owners(connection: Connection, trace_ids: list[str]) -> dict[str, str]:
    """Trace id -> the attempt (the newest, if several) whose trace it is."""
    owners: dict[str, str] = {}
    rows = _rows_for_ids(
        connection,
        "SELECT trace_id, id FROM attempts",
        trace_ids,
        then=" ORDER BY started_at, id",
    )
    for trace_id, attempt_id in rows:
        owners[trace_id] = attempt_id
    return owners


def _rows_for_ids(
    connection: Connection, select_from: str, ids: list[str], *, then: str = ""
) -> list[Any]:
    """The rows of ``select_from`` whose ``trace_id`` is one of ``ids``, SQL ``then`` after
    (it applies within each chunk of ids), by the driver (see :func:`stored_trace_ids`)."""
    if not ids:
        return []
    if connection.dialect.name == "postgresql":
        sql = f"{select_from} WHERE trace_id = ANY(%s){then}"
        return list(connection.exec_driver_sql(sql, (ids,)).all())
    rows: list[Any] = []
    for chunk in _chunks(ids):
        marks = ", ".join("?" * len(chunk))
        sql = f"{select_from} WHERE trace_id IN ({marks}){then}"
        rows.extend(connection.exec_driver_sql(sql, tuple(chunk)).all())
    return rows


def _known_spans(
    connection: Connection,
    key: Any,
    span_id: Any,
    position: Any,
    keys: list[str],
) -> dict[str, tuple[set[str], int]]:
    """Per key (trace or attempt id): the span ids stored and the next free position."""
    known: dict[str, tuple[set[str], int]] = {}
    for chunk in _chunks(keys):
        for owner, span, at in connection.execute(
            select(key, span_id, position).where(key.in_(chunk))
        ):
            seen, next_position = known.get(owner, (set(), 0))
            seen.add(span)
            known[owner] = (seen, max(next_position, at + 1))
    return known


def _join_attempts(
    connection: Connection,
    grouped: Mapping[str, tuple[list[Span], dict[str, Any]]],
    owners: Mapping[str, str],
) -> tuple[int, int]:
    """Append spans to the attempts whose trace ids they carry; (stored, duplicates)."""
    if not owners:
        return 0, 0
    known = _known_spans(
        connection, spans.c.attempt_id, spans.c.span_id, spans.c.position, list(owners.values())
    )
    rows: list[tuple[Any, ...]] = []
    duplicates = 0
    for trace_id, attempt_id in owners.items():
        seen, next_position = known.get(attempt_id, (set(), 0))
        batch = grouped[trace_id][0]
        fresh = fresh_spans(batch, seen)
        duplicates += len(batch) - len(fresh)
        rows.extend(
            span_row(attempt_id, span, position)
            for position, span in enumerate(fresh, start=next_position)
        )
    insert_many(connection, spans, SPAN_COLUMNS, rows)
    return len(rows), duplicates
