"""An attempt is stored once per (run, case, attempt), however often it is saved.

A resumed run, a Celery task delivered twice, a write retried after its commit was lost:
each saves an attempt whose key may already be stored. The first copy stored wins; a later
one is skipped with its spans, on SQLite and PostgreSQL, also when two writers race.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from seatrial.case import Case
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, encode_attempts
from seatrial.store._bulk import insert_many
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS
from seatrial.store._schema import attempts, spans

MakeRun = Callable[..., RunInfo]
MakeAttempt = Callable[..., AttemptRecord]


def span_count(store: Store, run_id: str) -> int:
    """Span rows stored for a run's attempts, counted by the database."""
    with store.engine.connect() as connection:
        return int(
            connection.exec_driver_sql(
                "SELECT count(*) FROM spans JOIN attempts ON spans.attempt_id = attempts.id "
                f"WHERE attempts.run_id = '{run_id}'"
            ).scalar_one()
        )


def keys(store: Store, run_id: str) -> list[tuple[str, int]]:
    """Every stored (case, attempt) of a run, duplicates kept, sorted."""
    return sorted((a.case_id, a.attempt) for a in store.attempts(run_id))


def test_saving_a_stored_attempt_again_replaces_nothing_and_doubles_nothing(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    first = make_attempt(run.run_id, "cancel", 1, verdict="FAIL")
    assert store.save_attempts([first]) == 1
    spans_once = span_count(store, run.run_id)

    redelivered = make_attempt(run.run_id, "cancel", 1, verdict="PASS", failure_type=None)
    assert store.save_attempts([redelivered]) == 0

    (stored,) = store.attempts(run.run_id, with_traces=True)
    assert (stored.verdict, stored.failure_type) == ("FAIL", "wrong_params")
    assert stored.trace is not None and first.trace is not None
    assert [s.span_id for s in stored.trace.spans] == [s.span_id for s in first.trace.spans]
    assert span_count(store, run.run_id) == spans_once


def test_a_batch_stores_its_new_attempts_and_skips_the_stored_ones(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    store.save_attempts([make_attempt(run.run_id, "cancel", 1)])
    per_attempt = span_count(store, run.run_id)

    batch = [
        make_attempt(run.run_id, "baggage", 1),
        make_attempt(run.run_id, "cancel", 1, verdict="PASS", failure_type=None),
        make_attempt(run.run_id, "cancel", 2),
    ]
    assert store.save_attempts(batch) == 2

    assert keys(store, run.run_id) == [("baggage", 1), ("cancel", 1), ("cancel", 2)]
    assert store.verdict_counts([run.run_id])[run.run_id] == {"FAIL": 3}
    assert span_count(store, run.run_id) == 3 * per_attempt


def test_a_key_twice_in_one_batch_is_stored_once_as_first_given(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    batch = [
        make_attempt(run.run_id, "baggage", 1, verdict="PASS", failure_type=None),
        make_attempt(run.run_id, "baggage", 1, verdict="ERROR", failure_type="agent_error"),
    ]
    encoded = [encode_attempts(batch[:1]), encode_attempts(batch[1:])]

    assert store.save_encoded(encoded) == 1

    (stored,) = store.attempts(run.run_id)
    assert stored.verdict == "PASS"


def _wait_for_a_blocked_writer(url: str, timeout_s: float = 30) -> bool:
    """Whether some PostgreSQL backend came to wait for a lock within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(url.split("?")[0], autocommit=True) as connection:
        while time.monotonic() < deadline:
            waiting = connection.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
            row = waiting.fetchone()
            if row is not None and row[0] > 0:
                return True
            time.sleep(0.05)
    return False


def test_a_writer_that_loses_the_race_for_a_key_stores_the_rest_of_its_batch(
    backend: str,
    db_url: str,
    make_run: MakeRun,
    make_attempt: MakeAttempt,
    cases: list[Case],
) -> None:
    with Store.open(db_url) as store, Store.open(db_url) as racer:
        run = make_run()
        store.create_run(run, cases)
        winner = encode_attempts([make_attempt(run.run_id, "cancel", 1, verdict="WARNING")])
        outcome: list[int | BaseException] = []

        def save_late_copy() -> None:
            late = [
                make_attempt(run.run_id, "cancel", 1, verdict="PASS", failure_type=None),
                make_attempt(run.run_id, "baggage", 1),
            ]
            try:
                outcome.append(racer.save_attempts(late))
            except BaseException as exc:  # handed to the test thread, which asserts on it
                outcome.append(exc)

        # The winner's transaction holds the key, uncommitted, while the racer writes: on
        # PostgreSQL the racer finds the key free, inserts it and waits on the unique index
        # (then is refused and looks again); on SQLite it waits to begin.
        with store.engine.begin() as connection:
            insert_many(connection, attempts, ATTEMPT_COLUMNS, winner.attempt_rows)
            insert_many(connection, spans, SPAN_COLUMNS, winner.span_rows)
            racing = threading.Thread(target=save_late_copy)
            racing.start()
            if backend == "postgresql":
                assert _wait_for_a_blocked_writer(db_url), "the racer never met the held key"
        racing.join(timeout=60)

        assert outcome == [1]
        assert keys(store, run.run_id) == [("baggage", 1), ("cancel", 1)]
        assert store.verdict_counts([run.run_id])[run.run_id] == {"WARNING": 1, "FAIL": 1}


def _save_each(url: str, records: list[AttemptRecord], start: Any) -> None:
    with Store.open(url) as store:
        start.wait(timeout=60)
        for record in records:
            store.save_attempts([record])


@pytest.mark.slow
def test_two_processes_saving_the_same_attempts_store_each_once(
    db_url: str, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    with Store.open(db_url) as store:
        run = make_run()
        store.create_run(run, cases)
        records = [
            make_attempt(run.run_id, case.id, attempt) for case in cases for attempt in (1, 2, 3)
        ]
        context = multiprocessing.get_context("spawn")
        start = context.Barrier(2)
        writers = [
            context.Process(target=_save_each, args=(db_url, order, start))
            for order in (records, records[::-1])
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=120)

        assert [w.exitcode for w in writers] == [0, 0]
        assert keys(store, run.run_id) == sorted((r.case_id, r.attempt) for r in records)
        one = records[0].trace
        assert one is not None
        assert span_count(store, run.run_id) == len(records) * len(one.spans)
