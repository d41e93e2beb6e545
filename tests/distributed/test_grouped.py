"""A worker's grouping threads take what was handed over since their last round."""

from __future__ import annotations

import queue
from concurrent.futures import ThreadPoolExecutor

from seatrial.distributed._commit import GroupCommit
from seatrial.distributed._grouped import GroupThread, Handed, take_group
from seatrial.distributed._lookup import GroupLookup
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, encode_attempts


def test_a_group_takes_what_is_waiting_up_to_its_size() -> None:
    handed: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for number in range(5):
        handed.put(number)

    assert take_group(handed, 3) == ([0, 1, 2], False)
    assert take_group(handed, 3) == ([3, 4], False)


def test_the_items_handed_before_the_stop_signal_are_still_served() -> None:
    handed: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    handed.put(1)
    handed.put(2)
    handed.put(None)

    assert take_group(handed, 10) == ([1, 2], True)


# The thread both grouping classes are, on a real store.


def _attempt(case_id: str, attempt: int) -> AttemptRecord:
    return AttemptRecord(run_id="r", case_id=case_id, attempt=attempt, verdict="PASS")


def test_attempts_handed_from_many_threads_are_stored_and_then_found(store: Store) -> None:
    store.create_run(RunInfo(run_id="r", suite="s", agent="a"), [])
    commit, lookup = GroupCommit(store), GroupLookup(store)
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: commit.store(encode_attempts([_attempt("c", n)])), range(40)))
            found = list(pool.map(lambda n: lookup.stored("r", "c", n), range(38, 42)))
    finally:
        commit.close()
        lookup.close()
    assert len(store.attempts("r")) == 40
    assert found == [True, True, False, False]


def test_a_failed_round_is_raised_in_every_thread_that_waited_on_it() -> None:
    class Refusing(GroupThread[Handed]):
        def serve(self, group: list[Handed]) -> None:
            for item in group:
                item.served(RuntimeError("database gone"))

    grouped = Refusing("test-refusing", 10)
    try:
        with ThreadPoolExecutor(4) as pool:
            outcomes = list(pool.map(lambda _: _outcome(grouped), range(4)))
    finally:
        grouped.close()
    assert outcomes == ["database gone"] * 4


def _outcome(grouped: GroupThread[Handed]) -> str:
    try:
        grouped.hand(Handed())
    except RuntimeError as exc:
        return str(exc)
    return "served"
