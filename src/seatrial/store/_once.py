"""Attempts are stored once per (run, case, attempt): which rows of a batch are new.

An attempt can reach the store more than once: a resumed run, a Celery task delivered again
after its worker died or its visibility timeout passed, a write retried after its commit was
lost with the connection. The first copy stored wins; a later one is dropped with its spans,
so nothing finished is replaced and nothing is doubled.
:meth:`~seatrial.store.Store.save_encoded` writes a batch as given first (the usual case
costs no lookup); when the unique constraint refuses it, it writes the batch again through
:func:`unstored`, inside the new transaction. Two writers can still both find a key free
(PostgreSQL only: SQLite's writers take turns); the constraint refuses the second, which
filters once more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS
from seatrial.store._traces import _chunks

_ID = ATTEMPT_COLUMNS.index("id")
_RUN_ID = ATTEMPT_COLUMNS.index("run_id")
_CASE_ID = ATTEMPT_COLUMNS.index("case_id")
_ATTEMPT = ATTEMPT_COLUMNS.index("attempt")
_SPAN_ATTEMPT_ID = SPAN_COLUMNS.index("attempt_id")

Key = tuple[str, str, int]
Rows = list[tuple[Any, ...]]


def unstored(
    connection: Connection, attempt_rows: Sequence[tuple[Any, ...]], span_rows: Rows
) -> tuple[Rows, Rows]:
    """The attempt rows whose (run, case, attempt) is not stored yet, and their span rows.

    A key twice in the batch keeps its first row. ``attempt_rows`` and ``span_rows`` are in
    the store's ATTEMPT_COLUMNS and SPAN_COLUMNS order.
    """
    stored = _stored_keys(connection, attempt_rows)
    fresh: Rows = []
    for row in attempt_rows:
        key = (row[_RUN_ID], row[_CASE_ID], row[_ATTEMPT])
        if key not in stored:
            stored.add(key)
            fresh.append(row)
    if len(fresh) == len(attempt_rows):
        return fresh, span_rows
    kept = {row[_ID] for row in fresh}
    return fresh, [row for row in span_rows if row[_SPAN_ATTEMPT_ID] in kept]


def _stored_keys(connection: Connection, attempt_rows: Sequence[tuple[Any, ...]]) -> set[Key]:
    """The keys already stored among those of ``attempt_rows``: one index lookup per run.

    The SQL goes to the driver as it is (the batch is on the runner's hot path, see
    ``_adopt._stored_trace_ids``); it reads every repeat of the batch's cases, a superset.
    """
    cases: dict[str, set[str]] = {}
    for row in attempt_rows:
        cases.setdefault(row[_RUN_ID], set()).add(row[_CASE_ID])
    found: set[Key] = set()
    postgres = connection.dialect.name == "postgresql"
    for run_id, case_ids in cases.items():
        if postgres:
            sql = "SELECT case_id, attempt FROM attempts WHERE run_id = %s AND case_id = ANY(%s)"
            rows = connection.exec_driver_sql(sql, (run_id, sorted(case_ids))).all()
        else:
            rows = []
            for chunk in _chunks(sorted(case_ids)):
                marks = ", ".join("?" * len(chunk))
                sql = (
                    "SELECT case_id, attempt FROM attempts "
                    f"WHERE run_id = ? AND case_id IN ({marks})"
                )
                rows.extend(connection.exec_driver_sql(sql, (run_id, *chunk)).all())
        found.update((run_id, str(case_id), int(attempt)) for case_id, attempt in rows)
    return found
