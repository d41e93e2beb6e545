"""How the coordinator follows a run from the store: each poll reads what was stored since the
last, and an attempt a slower writer committed below the watermark is still reported, once."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Connection

from seatrial.distributed import _dispatch
from seatrial.record import RunInfo
from seatrial.store import Store

pytestmark = pytest.mark.postgres


def insert_attempt(connection: Connection, run_id: str, case_id: str) -> None:
    """One attempt row, in ``connection``'s transaction (as a worker's COPY stores it)."""
    connection.exec_driver_sql(
        "INSERT INTO attempts (id, run_id, case_id, attempt, verdict, reason, tool_calls,"
        " model_calls, wall_time_ms, input_tokens, output_tokens, cost_usd, response,"
        " responses, user_id, session_id, started_at, finished_at, assertions,"
        " format_version) VALUES (%(id)s, %(run)s, %(case)s, 1, 'PASS', '', 0, 0, 0, 0, 0,"
        " 0, '', '[]', 'u', 's', 0, 0, '[]', 1)",
        {"id": case_id, "run": run_id, "case": case_id},
    )


def test_polls_report_each_attempt_once_even_one_committed_out_of_order(
    pg_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(pg_store_url)
    run = RunInfo(run_id="follow", suite="s", agent="a", started_at=1.0, seatrial_version="0")
    store.create_run(run, [])
    with store.engine.begin() as connection:
        insert_attempt(connection, run.run_id, "before")
    follow = _dispatch._Follow(store, run.run_id)
    started = follow.start()

    slow: Any = store.engine.connect()
    try:
        transaction = slow.begin()
        insert_attempt(slow, run.run_id, "slow")  # numbered first, committed last
        with store.engine.begin() as connection:
            insert_attempt(connection, run.run_id, "fast")
        first = follow.poll()
        transaction.commit()
    finally:
        slow.close()
    # Within RECOUNT_S of the last count, a poll reads only past the watermark: not the
    # slow attempt, and not the run again.
    follow.counted_at = float("inf")
    quiet = follow.poll()
    monkeypatch.setattr(_dispatch, "RECOUNT_S", 0.0)
    follow.counted_at = 0.0
    recounted = follow.poll()
    after = follow.poll()
    store.close()

    assert set(started) == {("before", 1)}
    assert set(first) == {("fast", 1)}
    assert quiet == {}
    assert ("slow", 1) in recounted
    assert set(after) == set()  # counted again: nothing missing, nothing read twice
