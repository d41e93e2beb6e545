"""Bulk writes into PostgreSQL go through COPY and behave as the inserts they replace.

Same rows back, errors as SQLAlchemy's (a refused key, a lost connection), nothing of a
failed batch stored, and a batch whose connection was killed mid-write stored once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import event, func, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, encode_attempts
from seatrial.store._bulk import insert_many
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS
from seatrial.store._schema import attempts, spans
from seatrial.store._translate import connection_lost
from tests.store.conftest import PG_DATABASE, PG_HOST, PG_PORT

pytestmark = pytest.mark.postgres


@pytest.fixture
def backend() -> str:
    """These tests are about PostgreSQL only."""
    return "postgresql"


@pytest.fixture
def sent(store: Store) -> Iterator[list[str]]:
    """The statements SQLAlchemy sends (COPY goes to the driver and is not among them)."""
    statements: list[str] = []

    def capture(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", capture)
    yield statements
    event.remove(store.engine, "before_cursor_execute", capture)


def stored_counts(store: Store, run_id: str) -> tuple[int, int]:
    with store.engine.connect() as connection:
        attempt_count = connection.execute(
            select(func.count()).select_from(attempts).where(attempts.c.run_id == run_id)
        ).scalar_one()
        span_count = connection.execute(
            select(func.count())
            .select_from(spans.join(attempts, spans.c.attempt_id == attempts.c.id))
            .where(attempts.c.run_id == run_id)
        ).scalar_one()
    return int(attempt_count), int(span_count)


def test_attempts_and_spans_are_copied_and_read_back_unchanged(
    store: Store,
    sent: list[str],
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    store.create_run(run, [])
    records = [
        make_attempt(
            run.run_id,
            case_id=f"case-{n}",
            response="含 NUL\x00 的回复 ✓",
            final_state={"big": 2**62, "nested": {"list": [1.5, None, "x"]}},
        )
        for n in range(12)
    ]
    sent.clear()

    assert store.save_attempts(records) == 12

    assert not [s for s in sent if s.lstrip().upper().startswith("INSERT")]
    back = {record.case_id: record for record in store.attempts(run.run_id, with_traces=True)}
    for record in records:
        stored = back[record.case_id]
        assert stored.response == "含 NUL\ufffd 的回复 ✓"
        assert stored.final_state == record.final_state
        assert stored.trace == record.trace
        assert stored.assertions == record.assertions
    assert stored_counts(store, run.run_id) == (12, sum(len(r.trace.spans) for r in records))


def test_a_key_refused_during_copy_is_an_integrity_error_and_stores_nothing(
    store: Store, make_run: Callable[..., RunInfo], make_attempt: Callable[..., AttemptRecord]
) -> None:
    run = make_run()
    store.create_run(run, [])
    encoded = encode_attempts([make_attempt(run.run_id, case_id=f"c{n}") for n in range(10)])
    twice = [*encoded.attempt_rows, encoded.attempt_rows[3]]

    with pytest.raises(IntegrityError, match="duplicate key"), store.engine.begin() as c:
        insert_many(c, attempts, ATTEMPT_COLUMNS, twice)

    assert stored_counts(store, run.run_id) == (0, 0)


def test_a_connection_killed_before_the_copy_is_retried_and_the_batch_stored_once(
    store: Store,
    pg_user: str,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    store.create_run(run, [])
    records = [make_attempt(run.run_id, case_id=f"case-{n}") for n in range(20)]
    killed: list[int] = []

    def kill_own_backend(conn: Any) -> None:
        # The batch's transaction has begun, nothing is sent yet: the server ends the session,
        # and the COPY is the first thing to find the connection dead.
        if killed:
            return
        pid = conn.connection.driver_connection.info.backend_pid
        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user=pg_user, dbname=PG_DATABASE, autocommit=True
        ) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        killed.append(pid)

    event.listen(store.engine, "begin", kill_own_backend)
    try:
        stored = store.save_attempts(records)
    finally:
        event.remove(store.engine, "begin", kill_own_backend)

    assert killed, "the batch began no transaction"
    assert stored == 20
    assert stored_counts(store, run.run_id) == (20, sum(len(r.trace.spans) for r in records))


def test_a_copy_on_a_dead_connection_says_the_connection_was_lost(
    store: Store,
    pg_user: str,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    store.create_run(run, [])
    encoded = encode_attempts([make_attempt(run.run_id, case_id=f"c{n}") for n in range(10)])

    with pytest.raises(DBAPIError) as raised, store.engine.begin() as connection:
        pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user=pg_user, dbname=PG_DATABASE, autocommit=True
        ) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        insert_many(connection, spans, SPAN_COLUMNS, encoded.span_rows)

    assert connection_lost(raised.value)
    assert stored_counts(store, run.run_id) == (0, 0)  # the pool hands out a live connection
