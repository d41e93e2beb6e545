"""Messages delivered again and runs stopped on the Celery backend: a delivery of a stored
attempt stores nothing twice and calls no agent, tasks sent before a run stopped run nothing,
and ``--resume`` finishes an interrupted run with every attempt stored once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.distributed import BrokerSettings, celery_app
from seatrial.store import Store
from seatrial.testing import AgentServer
from tests.distributed.conftest import (
    SEATRIAL,
    WorkerProcess,
    finish,
    local_verdicts,
    run_command,
    stored_total,
)
from tests.distributed.scripted import counted_reply, suite_text

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_a_delivery_of_a_stored_attempt_never_calls_the_agent_and_stale_tasks_run_nothing(
    tmp_path: Path,
    pg_store_url: str,
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_text(3), encoding="utf-8")
    env = {**broker_env, "SEATRIAL_DB_URL": pg_store_url}
    worker = start_worker(env, concurrency=2)
    with AgentServer(counted_reply) as agent:
        done = finish(
            subprocess.Popen(
                run_command(suite, pg_store_url, "--repeats", "2", agent=agent.url),
                cwd=tmp_path,
                env={**os.environ, **env},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
            worker,
        )
        assert done.returncode == 1, done.output  # c003 fails by script
        calls_in_run = len(agent.requests)
        with Store.open(pg_store_url) as store:
            run_id = store.list_runs()[0].run_id
            before = {(r.case_id, r.attempt): r for r in store.attempts(run_id)}
            finished_at = store.get_run(run_id).finished_at
        assert len(before) == 6 and finished_at is not None
        assert calls_in_run == 6

        # A worker trusts what it read of a run's status for a second (STATUS_TTL_S): let the
        # "running" it read during the run expire, so it reads the run as finished.
        time.sleep(1.5)
        app = celery_app(BrokerSettings(env["SEATRIAL_BROKER_URL"], env["SEATRIAL_QUEUE"], 6.0))
        # Sent before the run finished (a message the broker kept): acknowledged, not run.
        app.send_task(
            "seatrial.run_attempt",
            args=(run_id, "c001", 9, finished_at - 1.0),
            queue=env["SEATRIAL_QUEUE"],
        )
        worker.wait_for("'skipped'")
        # The same attempts delivered again after the run ended (a lease or a stall resends
        # them, or the broker's visibility timeout): found stored, the agent not called.
        for case_id, attempt in before:
            app.send_task(
                "seatrial.run_attempt",
                args=(run_id, case_id, attempt, time.time()),
                queue=env["SEATRIAL_QUEUE"],
            )
        worker.wait_for("'already stored'", times=len(before))
        calls_after_redelivery = len(agent.requests)
        # The near miss: an attempt of the run that is not stored yet is run, once.
        stored_before = worker.count("'stored'")
        app.send_task(
            "seatrial.run_attempt",
            args=(run_id, "c002", 3, time.time()),
            queue=env["SEATRIAL_QUEUE"],
        )
        worker.wait_for("'stored'", times=stored_before + 1)
        calls_after_new = len(agent.requests)

    assert calls_after_redelivery == calls_in_run
    assert calls_after_new == calls_in_run + 1
    with Store.open(pg_store_url) as store:
        after = store.attempts(run_id)
    assert len(after) == len(before) + 1
    for record in after:
        if (record.case_id, record.attempt) == ("c002", 3):
            assert record.verdict == "PASS"
            continue
        kept = before[(record.case_id, record.attempt)]
        assert (record.started_at, record.session_id) == (kept.started_at, kept.session_id)


def test_interrupted_coordinator_drops_queued_attempts_and_resume_finishes_once(
    tmp_path: Path,
    pg_store_url: str,
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    cases, repeats = 10, 4
    suite, local, expected = local_verdicts(tmp_path, cases, repeats)
    env = {**broker_env, "SEATRIAL_DB_URL": pg_store_url, "SEATRIAL_TEST_SLEEP": "0.3"}
    worker = start_worker(env, concurrency=2)
    coordinator = subprocess.Popen(
        run_command(suite, pg_store_url, "--repeats", str(repeats)),
        cwd=tmp_path,
        env={**os.environ, **env, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Ctrl-C as at a terminal: a shell's background job starts with SIGINT ignored, which
        # Python (and so the coordinator) would keep, and the test would wait for nothing.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    with Store.open(pg_store_url) as store:
        deadline = time.monotonic() + 120
        while stored_total(store) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        coordinator.send_signal(signal.SIGINT)
        stopped = finish(coordinator, worker)
        run_id = store.list_runs()[0].run_id
        # Every message sent is taken by the worker: run, or dropped as sent before the stop.
        worker.wait_for("succeeded", times=cases * repeats)
        interrupted = store.get_run(run_id)
        partial = len(store.attempts(run_id))

    assert stopped.returncode == 130, stopped.output
    assert f"--resume {run_id}" in stopped.output
    assert interrupted.status == "interrupted"
    assert worker.count("'skipped'") > 0
    assert 0 < partial < cases * repeats

    resumed = finish(
        subprocess.Popen(
            [SEATRIAL, "run", "--resume", run_id, "--backend", "celery", "--db", pg_store_url],
            cwd=tmp_path,
            env={**os.environ, **env, "COLUMNS": "200"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ),
        worker,
    )
    assert resumed.returncode == local.exit_code == 1, resumed.output
    with Store.open(pg_store_url) as store:
        rows = store.attempts(run_id)
        assert store.get_run(run_id).status == "finished"
    assert Counter((r.case_id, r.attempt) for r in rows) == dict.fromkeys(expected, 1)
    assert {(r.case_id, r.attempt): (r.verdict, r.failure_type) for r in rows} == expected
