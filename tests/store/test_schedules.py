"""Claims of scheduled jobs: one server wins a due time, on SQLite and on PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from seatrial.store import (
    Store,
    claim_schedule,
    finish_schedule,
    latest_schedule_runs,
    schedule_history,
)

DUE = 1_796_000_400.0  # a whole minute


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open store with no claims (the PostgreSQL session store is shared by tests)."""
    with Store.open(db_url) as opened:
        with opened.engine.begin() as connection:
            connection.exec_driver_sql("DELETE FROM schedule_runs")
        yield opened


def test_two_claims_of_one_due_time_one_wins(store: Store) -> None:
    first = claim_schedule(store, "nightly", DUE, claimed_by="a:1", now=DUE + 1)
    second = claim_schedule(store, "nightly", DUE, claimed_by="b:2", now=DUE + 2)
    assert (first, second) == (True, False)
    [claim] = schedule_history(store, "nightly")
    assert (claim.claimed_by, claim.status, claim.run_ids) == ("a:1", "running", ())


def test_another_due_time_or_schedule_is_claimed_separately(store: Store) -> None:
    assert claim_schedule(store, "nightly", DUE, claimed_by="a:1", now=DUE)
    assert claim_schedule(store, "nightly", DUE + 60, claimed_by="b:2", now=DUE + 60)
    assert claim_schedule(store, "hourly", DUE, claimed_by="b:2", now=DUE)


def test_a_claim_sent_again_by_its_claimer_is_its_own(store: Store) -> None:
    # A claim committed before its connection was lost is retried: the retry must not lose.
    assert claim_schedule(store, "nightly", DUE, claimed_by="a:1", now=DUE)
    assert claim_schedule(store, "nightly", DUE, claimed_by="a:1", now=DUE + 1)
    assert len(schedule_history(store, "nightly")) == 1


def test_claims_racing_from_many_threads_have_one_winner(db_url: str, store: Store) -> None:
    stores = [Store.open(db_url) for _ in range(6)]
    start = threading.Barrier(len(stores))
    won: list[str] = []

    def claim(index: int, own: Store) -> None:
        start.wait()
        if claim_schedule(own, "race", DUE, claimed_by=f"host:{index}", now=DUE):
            won.append(f"host:{index}")

    threads = [threading.Thread(target=claim, args=(i, s)) for i, s in enumerate(stores)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for own in stores:
            own.close()
    assert len(won) == 1
    assert [c.claimed_by for c in schedule_history(store, "race")] == won


def test_finishing_records_status_runs_and_error(store: Store) -> None:
    claim_schedule(store, "nightly", DUE, claimed_by="a:1", now=DUE)
    finish_schedule(
        store, "nightly", DUE, status="error", run_ids=["r1"], error="agent down", now=DUE + 9
    )
    [claim] = schedule_history(store, "nightly")
    assert (claim.status, claim.run_ids, claim.error, claim.finished_at) == (
        "error",
        ("r1",),
        "agent down",
        DUE + 9,
    )


def test_a_finished_job_cannot_be_recorded_as_running(store: Store) -> None:
    claim_schedule(store, "nightly", DUE, claimed_by="a:1", now=DUE)
    with pytest.raises(ValueError, match="ok, failed or error"):
        finish_schedule(store, "nightly", DUE, status="running", now=DUE)


def test_history_is_newest_first_and_latest_is_per_schedule(store: Store) -> None:
    for minute in range(3):
        due = DUE + 60 * minute
        claim_schedule(store, "nightly", due, claimed_by="a:1", now=due)
        finish_schedule(store, "nightly", due, status="ok", run_ids=[f"r{minute}"], now=due + 5)
    claim_schedule(store, "hourly", DUE, claimed_by="a:1", now=DUE)
    history = schedule_history(store, "nightly", limit=2)
    assert [c.due_at for c in history] == [DUE + 120, DUE + 60]
    latest = latest_schedule_runs(store)
    assert sorted(latest) == ["hourly", "nightly"]
    assert (latest["nightly"].due_at, latest["nightly"].run_ids) == (DUE + 120, ("r2",))
    assert latest["hourly"].status == "running"
    assert schedule_history(store, "weekly") == []
