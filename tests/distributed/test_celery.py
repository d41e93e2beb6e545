"""``seatrial run --backend celery`` with real ``seatrial worker`` processes, a Redis broker
and a PostgreSQL store: a worker killed mid-run loses no attempt and doubles none."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.store import Store
from tests.distributed.conftest import (
    AGENT,
    WorkerProcess,
    finish,
    local_verdicts,
    run_command,
    stored_total,
)
from tests.distributed.scripted import suite_text

CASES = 50
REPEATS = 4
ATTEMPTS = CASES * REPEATS


@pytest.mark.slow
@pytest.mark.postgres
def test_killed_worker_loses_nothing_and_doubles_nothing(
    tmp_path: Path,
    pg_store_url: str,
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    suite, local, expected = local_verdicts(tmp_path, CASES, REPEATS)
    assert len(expected) == ATTEMPTS
    assert {verdict for verdict, _ in expected.values()} == {"PASS", "FAIL", "ERROR"}

    env = {**broker_env, "SEATRIAL_DB_URL": pg_store_url, "SEATRIAL_TEST_SLEEP": "0.2"}
    doomed = start_worker(env, concurrency=4)
    survivor = start_worker(env, concurrency=4)
    coordinator = subprocess.Popen(
        run_command(suite, pg_store_url, "--repeats", str(REPEATS)),
        cwd=tmp_path,
        env={**os.environ, **env, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with Store.open(pg_store_url) as store:
        deadline = time.monotonic() + 120
        while stored_total(store) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(10)
        at_kill = stored_total(store)
        output = finish(coordinator, doomed, survivor).output
        run_id = store.list_runs()[0].run_id
        rows = store.attempts(run_id)
        info = store.get_run(run_id)

    assert 0 < at_kill < ATTEMPTS, f"the worker was killed after {at_kill} attempts"
    assert doomed.count("succeeded") > 0, "the killed worker had run attempts"
    assert coordinator.returncode == local.exit_code == 1, output
    assert "gate not met" in output or "FAIL" in output
    copies = Counter((r.case_id, r.attempt) for r in rows)
    assert len(rows) == ATTEMPTS
    assert set(copies.values()) == {1}
    assert {(r.case_id, r.attempt): (r.verdict, r.failure_type) for r in rows} == expected
    assert info.status == "finished"
    assert survivor.process.poll() is None


def test_celery_backend_without_a_broker_url_is_a_clear_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEATRIAL_BROKER_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_text(2), encoding="utf-8")
    db = tmp_path / "seatrial.db"
    runner = CliRunner()

    worker = runner.invoke(app, ["worker"])
    run = runner.invoke(
        app, ["run", str(suite), "--agent", AGENT, "--backend", "celery", "--db", f"sqlite:///{db}"]
    )

    for result in (worker, run):
        assert result.exit_code == 2, result.output
        assert "SEATRIAL_BROKER_URL" in result.output
        assert "Traceback" not in result.output
    with Store.open(f"sqlite:///{db}") as store:
        assert store.list_runs() == []
