"""Starting a worker process: ``seatrial worker`` over Celery's own worker.

The pool is Celery's thread pool, ``concurrency`` threads: a thread waits for its attempt
while every attempt of the process runs on one asyncio event loop (see
:mod:`seatrial.distributed._task`). A prefork pool would give each child its own agent
client, judge and gateway proxy and fork the store's connections; the solo pool would run one
attempt at a time. Attempts wait on the agent, not on the CPU: run more workers (processes,
machines) for more CPU.
"""

from __future__ import annotations

from pathlib import Path

from seatrial.distributed._app import BrokerSettings, celery_app
from seatrial.distributed._task import close_worker, configure_worker
from seatrial.record import DEFAULT_CONCURRENCY

LOG_LEVELS = ("debug", "info", "warning", "error")


def start_worker(
    concurrency: int = DEFAULT_CONCURRENCY,
    queue: str | None = None,
    loglevel: str = "info",
    project_dir: Path | None = None,
    hostname: str | None = None,
) -> None:
    """Run a worker in this process until it is stopped (SIGTERM: finish the attempts in
    flight, then exit; SIGINT twice or SIGKILL: the broker delivers its attempts again).

    Raises:
        ConfigError: no broker URL, Celery missing, or the configuration or store invalid.
    """
    broker = BrokerSettings.from_env(queue)
    app = celery_app(broker)
    # Opened now, so a wrong store or seatrial.yaml stops the command before Celery starts.
    configure_worker(project_dir, concurrency)
    from celery import signals

    def on_shutdown(**_: object) -> None:
        close_worker()

    signals.worker_shutdown.connect(on_shutdown, weak=False)
    argv = [
        "worker",
        "--pool=threads",
        f"--concurrency={concurrency}",
        f"--queues={broker.queue}",
        f"--loglevel={loglevel.upper()}",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    if hostname:
        argv.append(f"--hostname={hostname}")
    try:
        app.worker_main(argv)
    finally:
        signals.worker_shutdown.disconnect(on_shutdown)
        close_worker()
