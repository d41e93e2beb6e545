"""Worker processes share a run's attempts: each stored once, progress complete, resumable."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.record import AttemptRecord
from seatrial.run import RunOptions, can_fork, run_suite_async
from tests.conftest import agent_spec, wait_for_stored_attempts

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes need fork")

SEATRIAL = str(Path(sys.executable).parent / "seatrial")


class Collect:
    def __init__(self) -> None:
        self.records: list[AttemptRecord] = []

    def start(self, total: int, done: int) -> None:
        self.total = total

    def advance(self, record: AttemptRecord) -> None:
        self.records.append(record)

    def stop(self) -> None:
        pass


def test_workers_store_every_attempt_once_and_report_each_to_progress(write_suite, store):
    suite = load_suite(
        write_suite("""
suite: shared
cases:
  - {id: a, input: hello, repeats: 5, assertions: [{type: contains, value: hello}]}
  - {id: b, input: boom, repeats: 4}
  - {id: c, input: calm, repeats: 3, assertions: [{type: contains, value: fine}]}
""")
    )
    progress = Collect()

    async def go() -> str:
        adapter = resolve_agent(agent_spec("crash_on_boom"))
        await adapter.check()
        try:
            outcome = await run_suite_async(
                suite, adapter, store, RunOptions(workers=2, concurrency=4), progress
            )
        finally:
            await adapter.aclose()
        return outcome.run_id

    run_id = asyncio.run(go())
    attempts = store.attempts(run_id)
    keys = sorted((a.case_id, a.attempt) for a in attempts)
    assert keys == sorted({(a.case_id, a.attempt) for a in attempts})
    assert len(keys) == 12
    verdicts = {(a.case_id, a.verdict) for a in attempts}
    assert verdicts == {("a", "FAIL"), ("b", "ERROR"), ("c", "PASS")}
    assert sorted((r.case_id, r.attempt) for r in progress.records) == keys
    assert store.get_run(run_id).status == "finished"


def test_ctrl_c_stops_every_worker_and_resume_finishes_the_run(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: k\ncases: [{id: a, input: x, repeats: 40}]\n", encoding="utf-8")
    log = tmp_path / "calls.log"
    env = {**os.environ, "SEATRIAL_TEST_LOG": str(log), "SEATRIAL_TEST_SLEEP": "0.1"}
    process = subprocess.Popen(
        [
            SEATRIAL,
            "run",
            str(suite),
            "--agent",
            agent_spec("logged"),
            "--workers",
            "2",
            "--concurrency",
            "2",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    db = tmp_path / ".seatrial" / "seatrial.db"
    assert wait_for_stored_attempts(db, at_least=6) >= 6
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    assert "--resume" in output
    with sqlite3.connect(db) as conn:
        (run_id, status) = conn.execute("select run_id, status from runs").fetchone()
        kept = conn.execute("select count(*) from attempts").fetchone()[0]
    assert status == "interrupted"
    assert 6 <= kept < 40
    resumed = subprocess.run(
        [SEATRIAL, "run", "--resume", run_id],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select case_id, attempt from attempts").fetchall()
    assert sorted(rows) == [("a", n) for n in range(1, 41)]


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_run_whose_workers_were_stopped_is_interrupted_even_if_its_parent_heard_nothing(
    tmp_path,
):
    """Ctrl-C reaches the workers and the parent at slightly different moments; when the
    workers stop first (here: only they are signalled), the run must not be called finished
    and gated on the part that ran."""
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: k\ncases: [{id: a, input: x, repeats: 40}]\n", encoding="utf-8")
    env = {**os.environ, "SEATRIAL_TEST_LOG": str(tmp_path / "calls.log")}
    env["SEATRIAL_TEST_SLEEP"] = "0.1"
    command = [SEATRIAL, "run", str(suite), "--agent", agent_spec("logged"), "--workers", "2"]
    process = subprocess.Popen(
        [*command, "--concurrency", "2"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    db = tmp_path / ".seatrial" / "seatrial.db"
    assert wait_for_stored_attempts(db, at_least=4) >= 4
    workers = children_of(process.pid)
    assert workers, "the run has no worker processes"
    for pid in workers:
        os.kill(pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)

    assert process.returncode == 130, output
    assert "gate met" not in output
    with sqlite3.connect(db) as conn:
        (status,) = conn.execute("select status from runs").fetchone()
    assert status == "interrupted"
