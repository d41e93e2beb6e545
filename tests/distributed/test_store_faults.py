"""PostgreSQL ends the store's connections during a distributed run (``pg_terminate_backend``,
what a restart does to them), in the middle of the coordinator's poll and of the workers'
writes: the run waits, reconnects and finishes with the undisturbed run's verdicts, every
attempt stored once."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from seatrial.store import Store
from tests.distributed.conftest import WorkerProcess, finish, local_verdicts, run_command
from tests.store.conftest import PG_DATABASE, PG_HOST, PG_PORT, pg_url

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

CASES = 40
REPEATS = 2


class Backends:
    """The test's own PostgreSQL sessions, told apart by application name: the coordinator's
    and the workers'. Only these are ever ended, never another session's."""

    def __init__(self, user: str, schema: str) -> None:
        tag = uuid.uuid4().hex[:10]
        self.coordinator = f"seatrial-coord-{tag}"
        self.workers = f"seatrial-workers-{tag}"
        self._user = user
        self._schema = schema
        base = pg_url(user, schema)
        self.coordinator_url = f"{base}&application_name={self.coordinator}"
        self.workers_url = f"{base}&application_name={self.workers}"

    def connect(self) -> psycopg.Connection[Any]:
        """An admin connection (its own application name is neither of the two)."""
        return psycopg.connect(
            host=PG_HOST,
            port=PG_PORT,
            user=self._user,
            dbname=PG_DATABASE,
            autocommit=True,
            options=f"-csearch_path={self._schema}",
        )

    def stored(self) -> int:
        """Attempt rows stored."""
        with self.connect() as connection:
            row = connection.execute("SELECT count(*) FROM attempts").fetchone()
        return int(row[0]) if row else 0

    def terminate(self, connection: psycopg.Connection[Any]) -> Counter[str]:
        """End every session of the coordinator and the workers; how many of each."""
        rows = connection.execute(
            "SELECT application_name, pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND application_name IN (%s, %s) AND pid <> pg_backend_pid()",
            (PG_DATABASE, self.coordinator, self.workers),
        ).fetchall()
        return Counter(str(name) for name, ended in rows if ended)

    def terminate_while_polling(
        self, process: subprocess.Popen[str], timeout_s: float = 60
    ) -> tuple[Counter[str], int]:
        """Lock ``attempts`` until the coordinator's poll waits on it inside its query, end
        every session of the run, then let go. Returns what was ended and how many worker
        sessions were waiting on the lock too (writes or look-ups in flight)."""
        with self.connect() as holder, holder.transaction():
            holder.execute("LOCK TABLE attempts IN ACCESS EXCLUSIVE MODE")
            deadline = time.monotonic() + timeout_s
            with self.connect() as watcher:
                while time.monotonic() < deadline and process.poll() is None:
                    waiting = dict(
                        watcher.execute(
                            "SELECT application_name, count(*) FROM pg_stat_activity "
                            "WHERE application_name IN (%s, %s) AND wait_event_type = 'Lock' "
                            "GROUP BY application_name",
                            (self.coordinator, self.workers),
                        ).fetchall()
                    )
                    if waiting.get(self.coordinator) and waiting.get(self.workers):
                        return self.terminate(watcher), int(waiting[self.workers])
                    time.sleep(0.01)
        return Counter(), 0

    def wait_for_stored(self, at_least: int, process: subprocess.Popen[str]) -> None:
        """Poll until ``at_least`` attempts are stored, or ``process`` ended."""
        deadline = time.monotonic() + 90
        while self.stored() < at_least and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)


def test_a_run_survives_its_connections_ended_mid_poll_and_mid_write(
    tmp_path: Path,
    pg_user: str,
    pg_schemas: Callable[[], str],
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    suite, local, expected = local_verdicts(tmp_path, CASES, REPEATS)
    backends = Backends(pg_user, pg_schemas())
    Store.open(backends.coordinator_url).close()
    env = {**broker_env, "SEATRIAL_DB_URL": backends.workers_url, "SEATRIAL_TEST_SLEEP": "0.3"}
    worker = start_worker(env, concurrency=4)
    coordinator = subprocess.Popen(
        run_command(suite, backends.coordinator_url, "--repeats", str(REPEATS)),
        cwd=tmp_path,
        env={**os.environ, **env, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        backends.wait_for_stored(8, coordinator)
        mid_query, writers_waiting = backends.terminate_while_polling(coordinator)
        backends.wait_for_stored(CASES, coordinator)
        with backends.connect() as admin:
            idle = backends.terminate(admin)
        done = finish(coordinator, worker)
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()

    assert mid_query[backends.coordinator] >= 1, "the coordinator's poll never waited"
    assert writers_waiting >= 1 and mid_query[backends.workers] >= 1
    assert sum(idle.values()) >= 1, f"no session of the run to end: {idle}"
    assert done.returncode == local.exit_code == 1, done.output
    assert "lost the database connection" in done.output
    assert "lost the database connection" in worker.output()
    with Store.open(backends.coordinator_url) as store:
        run_id = store.list_runs()[0].run_id
        rows = store.attempts(run_id)
        assert store.get_run(run_id).status == "finished"
    assert Counter((r.case_id, r.attempt) for r in rows) == dict.fromkeys(expected, 1)
    assert {(r.case_id, r.attempt): (r.verdict, r.failure_type) for r in rows} == expected
