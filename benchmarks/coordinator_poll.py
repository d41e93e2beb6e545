"""The Celery coordinator's own CPU per attempt: what following a run from the store costs.

The coordinator (``execute_suite(..., backend="celery")``) runs in this process; the attempts
run on one ``seatrial worker`` process (Celery, Redis broker on 127.0.0.1:6379, a fresh
PostgreSQL schema on 127.0.0.1:5432) against the local HTTP agent of ``scale.py`` (50 ms per
answer, its own process). The figures are ``time.process_time()`` of this process over the
``execute_suite`` call (storing the run, sending the tasks, polling, the report) and over the
dispatch's call alone (sending and polling: following the run), each divided by the attempts;
the worker's CPU (user + system, from ``wait4``) is shown beside them.

Before issue 21 every 0.5 s poll read the whole run, so the cost per attempt grew with the
run; since, a poll reads what was stored after its watermark. Run it with another checkout's
sources first on the path (``PYTHONPATH=/other/src``) to measure that version: the workers
inherit the path.

    .venv/bin/python benchmarks/coordinator_poll.py [--sizes 1000 5000 20000] [--concurrency 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from http_agent_pool import agent_server  # noqa: E402
from scale import (  # noqa: E402
    REDIS,
    _start_worker,
    _stop_workers,
    _wait_until_ready,
    pg_schema,
    stored_run,
    write_suite,
)


class _FollowClock:
    """CPU of this process while the coordinator follows the run (the dispatch's call:
    sending the tasks and polling until every attempt is stored), summed over calls."""

    def __init__(self) -> None:
        self.cpu_s = 0.0

    def install(self) -> None:
        from seatrial.distributed import CeleryDispatch

        original = CeleryDispatch.__call__
        clock = self

        async def timed(self: object, *args: object, **kwargs: object) -> None:
            start = time.process_time()
            try:
                await original(self, *args, **kwargs)  # type: ignore[arg-type]
            finally:
                clock.cpu_s += time.process_time() - start

        CeleryDispatch.__call__ = timed  # type: ignore[method-assign]


def measure(url: str, attempts: int, concurrency: int, clock: _FollowClock) -> dict[str, float]:
    """One run of ``attempts``: the coordinator's CPU (whole call, following the run), the
    worker's CPU, the call's wall time and the run's own duration, in seconds."""
    from seatrial import execute_suite

    with tempfile.TemporaryDirectory() as tmp, pg_schema() as db_url:
        folder = Path(tmp)
        suite = write_suite(folder, attempts)
        env = {
            "SEATRIAL_BROKER_URL": REDIS,
            "SEATRIAL_DB_URL": db_url,
            "SEATRIAL_QUEUE": f"poll-{uuid.uuid4().hex[:8]}",
        }
        os.environ.update(env)
        name = "poll@%h"
        worker = _start_worker(folder, {**os.environ, **env}, concurrency, name)
        worker_cpu = 0.0
        try:
            _wait_until_ready([worker], [name])
            clock.cpu_s = 0.0
            cpu, wall = time.process_time(), time.perf_counter()
            execute_suite(suite, url, db=db_url, backend="celery", write_report_files=False)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            worker_cpu, _ = _stop_workers([worker])
        return {
            "cpu": cpu,
            "follow": clock.cpu_s,
            "worker": worker_cpu,
            "wall": wall,
            "run": stored_run(db_url, attempts),
        }


def main() -> None:
    """Measure each size once and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    import seatrial

    clock = _FollowClock()
    clock.install()
    print(f"seatrial from {Path(seatrial.__file__).parent}")
    print(
        "| attempts | coordinator CPU per attempt (whole call) | of which following the run "
        "| worker CPU per attempt | wall (call) | attempts/s (run) |"
    )
    print("|---|---|---|---|---|---|")
    with agent_server() as url:
        for size in args.sizes:
            got = measure(url, size, args.concurrency, clock)
            print(
                f"| {size:,} | {got['cpu'] / size * 1000:.2f} ms | "
                f"{got['follow'] / size * 1000:.2f} ms | {got['worker'] / size * 1000:.2f} ms | "
                f"{got['wall']:.1f} s | {size / got['run']:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
