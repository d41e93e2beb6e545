"""Local scale: attempts per second, CPU per attempt and peak memory of whole ``seatrial run``s.

Each figure is one ``seatrial run`` command (the CLI, as a user runs it: suite loading, the
runner, the store, the report and the summary at the end) against a local HTTP agent that
answers every POST after 50 ms (starlette under uvicorn, in a process of its own, so its
CPU is not counted). The suite is single-turn cases with a ``contains`` and a ``regex``
assertion; 1k, 10k and 100k attempts are 1,000 cases run 1, 10 and 100 times.

- ``--part local``: the runner on this machine (``--backend local``), SQLite and PostgreSQL
  (a fresh schema per run on 127.0.0.1:5432), at each size;
- ``--part celery``: the 10k suite through 1, 2 and 4 ``seatrial worker`` processes (Celery,
  Redis broker on 127.0.0.1:6379, PostgreSQL store), coordinated by
  ``seatrial run --backend celery``.

For each run: wall time of the command, attempts per second over the run itself (the store's
``started_at`` to ``finished_at``), CPU (user + system of the command and, on Celery, of
every worker) per attempt, and peak RSS (the command's; on Celery the largest worker's).
Every attempt is checked as stored once and passed. Not part of ``make test``; the 100k
runs take minutes.

    .venv/bin/python benchmarks/scale.py [--part local celery] [--sizes 1000 10000 100000]
        [--stores sqlite postgres] [--workers 1 2 4] [--concurrency 100]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from http_agent_pool import agent_server  # noqa: E402

SEATRIAL = str(Path(sys.executable).with_name("seatrial"))
PG = "postgresql://{user}@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/14"
CASES = 1000


@dataclass
class Figures:
    """One measured run."""

    label: str
    attempts: int
    wall_s: float
    run_s: float
    cpu_s: float
    peak_rss_mb: float

    def row(self) -> str:
        """A Markdown table row."""
        return (
            f"| {self.label} | {self.attempts:,} | {self.wall_s:.1f} s | "
            f"{self.attempts / self.run_s:,.0f} | {self.cpu_s / self.attempts * 1000:.2f} ms | "
            f"{self.peak_rss_mb:.0f} MB |"
        )


HEADER = (
    "| run | attempts | wall (command) | attempts/s (run) | CPU per attempt | peak RSS |\n"
    "|---|---|---|---|---|---|"
)


def write_suite(folder: Path, attempts: int) -> Path:
    """A YAML suite of ``CASES`` single-turn cases repeated to ``attempts`` attempts."""
    cases = min(CASES, attempts)
    repeats = attempts // cases
    lines = ["suite: scale", "cases:"]
    for i in range(cases):
        lines += [
            f"  - id: order-{i:05d}",
            "    input: Where is my order?",
            f"    repeats: {repeats}",
            "    assertions:",
            "      - type: contains",
            "        value: shipped",
            "      - type: regex",
            '        value: "Order A\\\\d+ is (shipped|delivered)"',
        ]
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def pg_user() -> str:
    """The first of ``postgres`` and ``root`` the local server lets in."""
    import psycopg

    for user in ("postgres", "root"):
        try:
            with psycopg.connect(host="127.0.0.1", user=user, dbname="test", connect_timeout=3):
                return user
        except psycopg.Error:
            continue
    raise SystemExit("PostgreSQL is not reachable on 127.0.0.1:5432 as postgres or root")


@contextmanager
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema for one run (dropped afterwards); yields the store URL."""
    import psycopg

    user = pg_user()
    schema = f"scale_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(host="127.0.0.1", user=user, dbname="test", autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield PG.format(user=user) + f"?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(host="127.0.0.1", user=user, dbname="test", autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


def run_measured(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Run ``command``; its wall time, CPU (user + system) and peak RSS in MB."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited with {code}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def stored_run(db_url: str, attempts: int) -> float:
    """The run's own duration; checks every attempt was stored once and passed."""
    from seatrial.store import Store

    with Store.open(db_url) as store:
        (info,) = store.list_runs(limit=1)
        counts = store.verdict_counts([info.run_id])[info.run_id]
        finished = store.finished_attempts(info.run_id)
    passed = counts.get("PASS", 0)
    if passed != attempts or len(finished) != attempts:
        raise SystemExit(f"expected {attempts} passed attempts, stored {counts}")
    assert info.finished_at is not None
    return info.finished_at - info.started_at


def local_run(url: str, attempts: int, store: str, concurrency: int) -> Figures:
    """One ``seatrial run --backend local`` of ``attempts`` attempts into ``store``."""
    with tempfile.TemporaryDirectory() as tmp, _store_url(store, Path(tmp)) as db_url:
        folder = Path(tmp)
        suite = write_suite(folder, attempts)
        command = [SEATRIAL, "run", str(suite), "--agent", url, "--db", db_url]
        command += ["--concurrency", str(concurrency)]
        wall, cpu, peak = run_measured(command, folder, dict(os.environ))
        run_s = stored_run(db_url, attempts)
    return Figures(f"local, {store}", attempts, wall, run_s, cpu, peak)


@contextmanager
def _store_url(store: str, folder: Path) -> Iterator[str]:
    if store == "sqlite":
        yield f"sqlite:///{folder / 'scale.db'}"
    else:
        with pg_schema() as url:
            yield url


def celery_run(url: str, attempts: int, workers: int, concurrency: int) -> Figures:
    """The suite through ``workers`` ``seatrial worker`` processes; PostgreSQL store."""
    with tempfile.TemporaryDirectory() as tmp, pg_schema() as db_url:
        folder = Path(tmp)
        suite = write_suite(folder, attempts)
        env = {
            **os.environ,
            "SEATRIAL_BROKER_URL": REDIS,
            "SEATRIAL_DB_URL": db_url,
            "SEATRIAL_QUEUE": f"scale-{uuid.uuid4().hex[:8]}",
        }
        per_worker = max(1, concurrency // workers)
        names = [f"scale{n}@%h" for n in range(workers)]
        started = [_start_worker(folder, env, per_worker, name) for name in names]
        try:
            _wait_until_ready(started, names)
            command = [SEATRIAL, "run", str(suite), "--agent", url, "--backend", "celery"]
            command += ["--db", db_url, "--concurrency", str(concurrency)]
            wall, cpu, peak = run_measured(command, folder, env)
        finally:
            worker_cpu, worker_peak = _stop_workers(started)
        run_s = stored_run(db_url, attempts)
    return Figures(
        f"celery, {workers} worker{'s' if workers > 1 else ''}",
        attempts,
        wall,
        run_s,
        cpu + worker_cpu,
        max(peak, worker_peak),
    )


def _start_worker(
    folder: Path, env: dict[str, str], concurrency: int, name: str
) -> subprocess.Popen[bytes]:
    # Warnings only: at info level a worker logs every task and every HTTP request, which
    # would be counted as the harness's CPU.
    command = [SEATRIAL, "worker", "--concurrency", str(concurrency), "--loglevel", "warning"]
    command += ["--project", str(folder), "--hostname", name]
    log = folder / f"{name.split('@')[0]}.log"
    with log.open("wb") as out:
        return subprocess.Popen(command, cwd=folder, env=env, stdout=out, stderr=out)


def _wait_until_ready(workers: list[subprocess.Popen[bytes]], names: list[str]) -> None:
    """Wait until every worker answers a Celery ping (so start-up is not timed)."""
    from celery import Celery

    app = Celery("scale-ping", broker=REDIS, set_as_current=False)
    host = socket.gethostname()
    expected = {name.replace("%h", host) for name in names}
    deadline = time.monotonic() + 120
    while True:
        replies = app.control.ping(destination=sorted(expected), timeout=1.0)
        if expected <= {name for reply in replies for name in reply}:
            return
        if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
            raise SystemExit(f"the workers did not start: {replies}")


def _stop_workers(workers: list[subprocess.Popen[bytes]]) -> tuple[float, float]:
    cpu = peak = 0.0
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        _, _, usage = os.wait4(worker.pid, 0)
        cpu += usage.ru_utime + usage.ru_stime
        peak = max(peak, usage.ru_maxrss / 1024)
    return cpu, peak


def main() -> None:
    """Run the parts asked for and print one table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", nargs="+", default=["local", "celery"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10_000, 100_000])
    parser.add_argument("--stores", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--celery-attempts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    print(f"concurrency {args.concurrency}; agent answers after 50 ms", flush=True)
    print(HEADER, flush=True)
    with agent_server() as url:
        if "local" in args.part:
            for store in args.stores:
                for size in args.sizes:
                    print(local_run(url, size, store, args.concurrency).row(), flush=True)
        if "celery" in args.part:
            for workers in args.workers:
                figures = celery_run(url, args.celery_attempts, workers, args.concurrency)
                print(figures.row(), flush=True)


if __name__ == "__main__":
    main()
