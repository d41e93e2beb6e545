"""Bulk writes into SQLite with many rows per statement behave as ``executemany`` does.

Every row back in order whatever the batch's size (whole statements, then the rest), a
refused key an IntegrityError that stores nothing, and the statement journal kept in memory
for the write alone.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import literal_column, select
from sqlalchemy.exc import IntegrityError

from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, encode_attempts
from seatrial.store._bulk import insert_many, sqlite_rows_per_statement
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS
from seatrial.store._core import journal_in_memory
from seatrial.store._schema import attempts


@pytest.fixture
def backend() -> str:
    """These tests are about SQLite only."""
    return "sqlite"


def test_a_statement_takes_a_power_of_two_of_rows_within_the_parameter_limit() -> None:
    assert sqlite_rows_per_statement(len(ATTEMPT_COLUMNS)) == 32  # 26 columns: 999 // 26 = 38
    assert sqlite_rows_per_statement(len(SPAN_COLUMNS)) == 64
    assert sqlite_rows_per_statement(2000) == 1


@pytest.mark.parametrize("count", [2, 31, 32, 33, 64, 95])
def test_every_row_is_stored_in_order_whatever_the_batch_size(
    store: Store,
    count: int,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    store.create_run(run, [])
    records = [make_attempt(run.run_id, case_id=f"c{n:03d}") for n in range(count)]
    encoded = encode_attempts(records)
    with store.engine.begin() as connection:
        insert_many(connection, attempts, ATTEMPT_COLUMNS, encoded.attempt_rows, many_rows=True)
        stored = connection.execute(
            select(attempts.c.case_id)
            .where(attempts.c.run_id == run.run_id)
            .order_by(literal_column("rowid"))
        ).scalars()
        assert list(stored) == [r.case_id for r in records]


def test_a_refused_key_is_an_integrity_error_and_stores_nothing_of_the_batch(
    store: Store, make_run: Callable[..., RunInfo], make_attempt: Callable[..., AttemptRecord]
) -> None:
    run = make_run()
    store.create_run(run, [])
    encoded = encode_attempts([make_attempt(run.run_id, case_id=f"c{n}") for n in range(40)])
    twice = [*encoded.attempt_rows, encoded.attempt_rows[3]]

    with pytest.raises(IntegrityError, match="UNIQUE"), store.engine.begin() as connection:
        insert_many(connection, attempts, ATTEMPT_COLUMNS, twice, many_rows=True)

    assert store.attempts(run.run_id) == []


def test_the_statement_journal_is_in_memory_for_the_write_alone(store: Store) -> None:
    with store.engine.connect() as connection:
        with journal_in_memory(connection):
            assert connection.exec_driver_sql("PRAGMA temp_store").scalar() == 2  # MEMORY
            connection.rollback()
        assert connection.exec_driver_sql("PRAGMA temp_store").scalar() == 0  # DEFAULT
