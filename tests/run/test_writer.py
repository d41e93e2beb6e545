"""The attempt writer: attempts finishing close together share one transaction (group commit)."""

from __future__ import annotations

import time
from pathlib import Path

from seatrial.record import AttemptRecord, RunInfo
from seatrial.run._writer import AttemptWriter
from seatrial.store import Store


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
