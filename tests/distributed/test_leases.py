"""A worker SIGKILLed mid-run: the attempts it held come back through their leases, not the
broker's visibility timeout (an hour here, as by default), and the run ends with the
undisturbed run's verdicts, every attempt stored once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.distributed._lease import lease_key
from seatrial.store import Store
from tests.distributed.conftest import (
    WorkerProcess,
    finish,
    local_verdicts,
    run_command,
    stored_total,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

CASES = 20
REPEATS = 2


def test_a_killed_workers_attempts_come_back_through_their_leases_within_the_hour(
    tmp_path: Path,
    pg_store_url: str,
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    redis = pytest.importorskip("redis")
    suite, local, expected = local_verdicts(tmp_path, CASES, REPEATS)

    # The broker alone would bring the killed worker's messages back after an hour: a run
    # that ends within the test's limit got them back some other way.
    env = {
        **broker_env,
        "SEATRIAL_VISIBILITY_TIMEOUT": "3600",
        "SEATRIAL_DB_URL": pg_store_url,
        "SEATRIAL_TEST_SLEEP": "0.5",
    }
    doomed = start_worker(env, concurrency=4)
    survivor = start_worker(env, concurrency=4)
    client = redis.Redis.from_url(env["SEATRIAL_BROKER_URL"])
    coordinator = subprocess.Popen(
        run_command(suite, pg_store_url, "--repeats", str(REPEATS)),
        cwd=tmp_path,
        env={**os.environ, **env, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    mark = f"/{doomed.process.pid}/".encode()
    held: list[bytes] = []
    with Store.open(pg_store_url) as store:
        deadline = time.monotonic() + 90
        while not held and time.monotonic() < deadline and coordinator.poll() is None:
            runs = store.list_runs()
            if runs and stored_total(store) >= 4:
                leases = client.hgetall(lease_key(runs[0].run_id))
                held = [field for field, value in leases.items() if mark in value]
            time.sleep(0.02)
        # What the doomed worker holds at the kill (the first leases seen may be finished by
        # then): the attempts the leases must bring back.
        run_id = store.list_runs()[0].run_id if held else ""
        at_death = [f for f, v in client.hgetall(lease_key(run_id)).items() if mark in v]
        killed_at = time.time()
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(10)
        at_kill = stored_total(store)
        output = finish(coordinator, doomed, survivor).output
        run_id = store.list_runs()[0].run_id
        rows = store.attempts(run_id)
    client.close()

    assert held, "the doomed worker never held a lease"
    assert 0 < at_kill < CASES * REPEATS, f"the worker was killed after {at_kill} attempts"
    assert coordinator.returncode == local.exit_code == 1, output
    assert "a worker stopped renewing its lease: sent" in output
    assert Counter((r.case_id, r.attempt) for r in rows) == dict.fromkeys(expected, 1)
    assert {(r.case_id, r.attempt): (r.verdict, r.failure_type) for r in rows} == expected
    # What the run can show without a timed assertion: when the held attempts started again.
    keys = {tuple(f.decode().split("\t")) for f in at_death}
    restarts = [r.started_at - killed_at for r in rows if (r.case_id, str(r.attempt)) in keys]
    print(
        f"held at the kill: {len(at_death)}; "
        f"restarted after {sorted(round(s, 1) for s in restarts)} s"
    )
