"""Fixtures for the Celery backend: a per-test broker (Redis database and queue), a fresh
PostgreSQL schema as the store, and real ``seatrial worker`` processes.

Redis is the server on 127.0.0.1:6379 and PostgreSQL the one on 127.0.0.1:5432; a test is
skipped, saying why, when either does not answer. Workers use a short visibility timeout so
that messages of a killed worker come back within the test.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from seatrial import SuiteRun, execute_suite
from seatrial.run import RunOptions
from seatrial.store import Store
from tests.distributed.scripted import suite_text
from tests.store.conftest import pg_schemas, pg_url, pg_user

__all__ = ["pg_schemas", "pg_user"]  # fixtures used here, defined with the store's tests

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
REDIS_HOST = "127.0.0.1"
REDIS_PORT = 6379
VISIBILITY_TIMEOUT_S = 6
READY_TIMEOUT_S = 90.0
COORDINATOR_LIMIT_S = 100
AGENT = f"python:{Path(__file__).parent / 'scripted.py'}:answer"


@pytest.fixture
def pg_store_url(pg_user: str, pg_schemas: Callable[[], str]) -> str:
    """A migrated, empty PostgreSQL store in a schema of its own."""
    url = pg_url(pg_user, pg_schemas())
    Store.open(url).close()
    return url


@pytest.fixture
def broker_env() -> Iterator[dict[str, str]]:
    """The broker settings of one test: a Redis database, a queue of its own, and a short
    visibility timeout; the queue is deleted afterwards."""
    redis = pytest.importorskip("redis")
    database = random.randint(1, 15)
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=database, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis not reachable at {REDIS_HOST}:{REDIS_PORT}: {exc}")
    queue = f"seatrial-test-{uuid.uuid4().hex[:10]}"
    yield {
        "SEATRIAL_BROKER_URL": f"redis://{REDIS_HOST}:{REDIS_PORT}/{database}",
        "SEATRIAL_QUEUE": queue,
        "SEATRIAL_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_S),
    }
    client.delete(queue)
    client.close()


@dataclass
class WorkerProcess:
    """A ``seatrial worker`` subprocess and its log file."""

    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        """What the worker has logged so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def count(self, text: str) -> int:
        """How many times ``text`` appears in the log."""
        return self.output().count(text)

    def wait_for(self, text: str, times: int = 1, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Wait until ``text`` was logged ``times`` times; fail with the log otherwise."""
        deadline = time.monotonic() + timeout_s
        while self.count(text) < times:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"worker never logged {text!r} x{times}:\n{self.output()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM (finish what is in flight), then SIGKILL if it does not exit."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    """Start ``seatrial worker`` processes (stopped at the end); each waits until ready."""
    started: list[WorkerProcess] = []

    def start(env: dict[str, str], concurrency: int = 4, name: str | None = None) -> WorkerProcess:
        name = name or f"w{len(started) + 1}"
        log = tmp_path / f"{name}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [
                    SEATRIAL,
                    "worker",
                    "--concurrency",
                    str(concurrency),
                    "--hostname",
                    f"{name}@%h",
                ],
                cwd=tmp_path,
                env={**os.environ, **env},
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        worker = WorkerProcess(process, log)
        started.append(worker)
        worker.wait_for(" ready.")
        return worker

    yield start
    for worker in started:
        worker.stop()


def run_command(suite: Path, url: str, *more: str, agent: str = AGENT) -> list[str]:
    """``seatrial run SUITE`` on the Celery backend with the scripted agent (or ``agent``) and
    a 3 s timeout."""
    return [
        SEATRIAL,
        "run",
        str(suite),
        "--agent",
        agent,
        "--backend",
        "celery",
        "--db",
        url,
        "--timeout",
        "3",
        *more,
    ]


@dataclass
class Finished:
    """How a coordinator process ended."""

    returncode: int
    output: str


def finish(coordinator: subprocess.Popen[str], *workers: WorkerProcess) -> Finished:
    """Wait for the coordinator; past the limit, fail with its output and the workers' logs."""
    try:
        output, _ = coordinator.communicate(timeout=COORDINATOR_LIMIT_S)
    except subprocess.TimeoutExpired:
        coordinator.kill()
        output, _ = coordinator.communicate()
        logs = "\n".join(worker.output() for worker in workers)
        pytest.fail(f"the run did not end:\n{output}\n--- workers ---\n{logs}")
    return Finished(coordinator.returncode, output)


def verdicts_of(store: Store, run_id: str) -> dict[tuple[str, int], tuple[str, str | None]]:
    """Verdict and failure type of each stored attempt of a run."""
    return {(r.case_id, r.attempt): (r.verdict, r.failure_type) for r in store.attempts(run_id)}


def stored_total(store: Store) -> int:
    """Attempts stored for the newest run (0 before it exists)."""
    runs = store.list_runs()
    if not runs:
        return 0
    return sum(store.verdict_counts([runs[0].run_id])[runs[0].run_id].values())


def local_verdicts(
    tmp_path: Path, cases: int, repeats: int
) -> tuple[Path, SuiteRun, dict[tuple[str, int], tuple[str, str | None]]]:
    """Write the scripted suite of ``cases`` cases into ``tmp_path`` and run it in this
    process (SQLite, ``repeats`` each): the suite's path, the local run, and the verdicts a
    distributed run of it must reproduce."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_text(cases), encoding="utf-8")
    local = execute_suite(
        suite,
        AGENT,
        db=f"sqlite:///{tmp_path / 'local.db'}",
        options=RunOptions(repeats=repeats, timeout_s=3),
        write_report_files=False,
    )
    with Store.open(f"sqlite:///{tmp_path / 'local.db'}") as store:
        return suite, local, verdicts_of(store, local.run_id)
