"""What a coordinator following a run reads: only the attempts stored since its last poll,
how many are stored, whether one attempt is stored; each read survives a connection that
the server ends in the middle of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store
from tests.store.conftest import PG_DATABASE, PG_HOST, PG_PORT

MakeRun = Callable[..., RunInfo]
MakeAttempt = Callable[..., AttemptRecord]


def test_a_poll_returns_only_the_attempts_stored_since_the_last_one(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    run, other = make_run(), make_run()
    store.create_run(run, [])
    store.create_run(other, [])
    store.save_attempts([make_attempt(run.run_id, f"c{n}") for n in range(3)])
    store.save_attempts([make_attempt(other.run_id, "elsewhere")])

    first = store.verdicts_since(run.run_id)
    store.save_attempts([make_attempt(run.run_id, "c1", 2, verdict="PASS", failure_type=None)])
    store.save_attempts([make_attempt(run.run_id, "c9")])
    second = store.verdicts_since(run.run_id, first.last_seq)
    quiet = store.verdicts_since(run.run_id, second.last_seq)

    assert set(first.verdicts) == {("c0", 1), ("c1", 1), ("c2", 1)}
    assert first.verdicts[("c0", 1)] == ("FAIL", "wrong_params")
    assert second.verdicts == {("c1", 2): ("PASS", None), ("c9", 1): ("FAIL", "wrong_params")}
    assert second.last_seq > first.last_seq
    assert quiet.verdicts == {}
    assert quiet.last_seq == second.last_seq
    assert store.stored_count(run.run_id) == 5
    assert store.stored_count(other.run_id) == 1


def test_stored_attempts_are_found_and_their_neighbours_are_not(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    run, other = make_run(), make_run()
    store.create_run(run, [])
    store.create_run(other, [])
    store.save_attempts([make_attempt(run.run_id, "c1", 1), make_attempt(run.run_id, "c2", 2)])
    store.save_attempts([make_attempt(other.run_id, "c3", 1)])

    asked = [("c1", 1), ("c1", 2), ("c2", 1), ("c2", 2), ("c3", 1)]

    assert store.stored_among(run.run_id, asked) == {("c1", 1), ("c2", 2)}
    assert store.stored_among(other.run_id, asked) == {("c3", 1)}
    assert store.stored_among(run.run_id, []) == set()


@pytest.mark.postgres
def test_an_attempt_committed_after_a_later_numbered_one_is_seen_in_the_count(
    store: Store, backend: str, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    """The near-miss a watermark alone gets wrong: two writers commit out of numbering
    order; the poll past the later number skips the earlier one, and the count says so."""
    if backend != "postgresql":
        pytest.skip("SQLite's writers take turns: rows are committed in numbering order")
    run = make_run()
    store.create_run(run, [])
    early = store.engine.connect()
    try:
        transaction = early.begin()
        early.exec_driver_sql(
            "INSERT INTO attempts (id, run_id, case_id, attempt, verdict, reason, tool_calls,"
            " model_calls, wall_time_ms, input_tokens, output_tokens, cost_usd, response,"
            " responses, user_id, session_id, started_at, finished_at, assertions,"
            " format_version) VALUES ('early', %(run)s, 'slow', 1, 'PASS', '', 0, 0, 0, 0, 0,"
            " 0, '', '[]', 'u', 's', 0, 0, '[]', 1)",
            {"run": run.run_id},
        )
        store.save_attempts([make_attempt(run.run_id, "fast")])
        seen = store.verdicts_since(run.run_id)
        transaction.commit()
    finally:
        early.close()

    after = store.verdicts_since(run.run_id, seen.last_seq)

    assert set(seen.verdicts) == {("fast", 1)}
    assert after.verdicts == {}
    assert store.stored_count(run.run_id) == 2 > len(seen.verdicts)
    assert set(store.verdicts_since(run.run_id).verdicts) == {("fast", 1), ("slow", 1)}


@pytest.mark.postgres
def test_a_poll_whose_connection_is_ended_mid_query_is_run_again(
    store: Store, backend: str, pg_user: str, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite has no server to end a connection")
    run = make_run()
    store.create_run(run, [])
    store.save_attempts([make_attempt(run.run_id, f"c{n}") for n in range(4)])
    ended: list[int] = []

    def end_own_backend(conn: Any, *_: Any) -> None:
        # The statement is about to go out on a connection the pool checked as alive:
        # pool_pre_ping cannot help; only running the read again on a new connection can.
        if len(ended) >= 2:
            return
        pid = conn.connection.driver_connection.info.backend_pid
        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user=pg_user, dbname=PG_DATABASE, autocommit=True
        ) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        ended.append(pid)

    event.listen(store.engine, "before_cursor_execute", end_own_backend)
    try:
        polled = store.verdicts_since(run.run_id)
        counted = store.stored_count(run.run_id)
    finally:
        event.remove(store.engine, "before_cursor_execute", end_own_backend)

    assert len(ended) == 2
    assert len(polled.verdicts) == 4
    assert counted == 4
