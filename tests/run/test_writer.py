"""The attempt writer: attempts finishing close together share one transaction (group commit),
and a store slower than the agent holds new attempts back."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from seatrial.agent import resolve_agent
from seatrial.case import Case, Suite
from seatrial.record import AttemptRecord, RunInfo
from seatrial.run import RunOptions, run_suite_async, take_group
from seatrial.run._writer import MAX_BATCH, MAX_QUEUED, AttemptWriter
from seatrial.store import EncodedAttempts, Store


def attempt(number: int) -> AttemptRecord:
    return AttemptRecord(run_id="grouped", case_id="c", attempt=number, verdict="PASS")


def open_store(tmp_path: Path) -> Store:
    store = Store.open(f"sqlite:///{tmp_path / 'runs.db'}")
    store.create_run(RunInfo(run_id="grouped", suite="s", agent="a"), [])
    return store


def test_attempts_finishing_one_after_another_are_committed_together(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        writer = AttemptWriter(store, group_wait_s=600)
        for number in range(1, 6):
            writer.submit(attempt(number))
            time.sleep(0.02)  # attempts finish one by one, as at low concurrency
        writer.close()  # ends the open group at once: no wait for the window

        assert writer.commits == 1
        assert writer.written == 5
        assert store.finished_attempts("grouped") == {("c", n) for n in range(1, 6)}


def test_an_open_group_is_committed_when_its_window_ends_while_the_run_goes_on(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        writer = AttemptWriter(store, group_wait_s=0.05)
        try:
            writer.submit(attempt(1))
            for _ in range(600):  # up to a minute on a loaded machine; never a timed check
                if store.finished_attempts("grouped"):
                    break
                time.sleep(0.1)
            assert store.finished_attempts("grouped") == {("c", 1)}
        finally:
            writer.close()
        assert writer.commits == 1


STARTED = [0]
SLOW_STORE: list[SlowStore] = []


def counting(message: str, session: object) -> str:
    """An instant agent that counts the attempts started and notes how far they ran ahead
    of the store."""
    STARTED[0] += 1
    store = SLOW_STORE[0]
    store.most_ahead = max(store.most_ahead, STARTED[0] - store.stored)
    return "ok"


class SlowStore(Store):
    """A real store whose commits take 20 ms longer: slower than the agent."""

    stored = 0
    most_ahead = 0

    def save_encoded(self, batches: Sequence[EncodedAttempts]) -> int:
        time.sleep(0.02)
        saved = super().save_encoded(batches)
        self.stored += saved
        return saved


def test_a_store_slower_than_the_agent_holds_new_attempts_back_so_memory_stays_flat(
    tmp_path: Path,
) -> None:
    suite = Suite(
        name="fast",
        cases=[Case(id=f"c{n}", input="hi", repeats=100) for n in range(40)],
    )
    concurrency = 50
    STARTED[0] = 0
    with SlowStore.open(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        SLOW_STORE[:] = [store]

        async def go() -> str:
            adapter = resolve_agent("python:tests.run.test_writer:counting")
            try:
                options = RunOptions(concurrency=concurrency)
                return (await run_suite_async(suite, adapter, store, options)).run_id
            finally:
                await adapter.aclose()

        run_id = asyncio.run(go())
        assert len(store.finished_attempts(run_id)) == 4000
        # Queued for the writer, being committed, and in flight: never the whole run.
        assert 0 < store.most_ahead <= MAX_QUEUED + MAX_BATCH + concurrency


def test_a_group_stays_open_for_what_is_handed_within_its_wait() -> None:
    handed: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    handed.put(1)

    def later() -> None:
        handed.put(2)
        handed.put(None)

    threading.Timer(0.05, later).start()
    # The stop ends the wait: the group holds what came within it, whenever that was.
    assert take_group(handed, 10, wait_s=30.0) == ([1, 2], True)


def test_without_a_wait_a_group_is_what_was_waiting_when_it_opened() -> None:
    handed: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    handed.put(1)
    assert take_group(handed, 10) == ([1], False)
