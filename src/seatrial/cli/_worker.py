"""``seatrial worker``: run attempts of ``seatrial run --backend celery`` on this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from seatrial._defaults import DEFAULT_CONCURRENCY
from seatrial.cli._app import app, guarded
from seatrial.cli._options import WorkerConcurrency
from seatrial.errors import ConfigError
from seatrial.i18n import N_


@app.command()
@guarded
def worker(
    concurrency: WorkerConcurrency = DEFAULT_CONCURRENCY,
    queue: Annotated[
        str | None,
        typer.Option(help=N_("Queue to read (default: $SEATRIAL_QUEUE, else `seatrial`).")),
    ] = None,
    loglevel: Annotated[
        str, typer.Option(help=N_("Log level: debug, info, warning or error."))
    ] = "info",
    project: Annotated[
        Path | None,
        typer.Option(
            help=N_(
                "Project folder whose seatrial.yaml names the agents and models "
                "(default: the current folder)."
            )
        ),
    ] = None,
    hostname: Annotated[
        str | None, typer.Option(help=N_("The worker's Celery node name (default: celery@HOST)."))
    ] = None,
) -> None:
    """Run attempts sent by `seatrial run --backend celery` (broker: $SEATRIAL_BROKER_URL,
    store: $SEATRIAL_DB_URL); SIGTERM finishes the attempts in flight, then exits."""
    from seatrial.distributed import LOG_LEVELS, start_worker

    if loglevel.lower() not in LOG_LEVELS:
        raise ConfigError(f"--loglevel {loglevel}: choose one of {', '.join(LOG_LEVELS)}")
    start_worker(
        concurrency=concurrency,
        queue=queue,
        loglevel=loglevel.lower(),
        project_dir=project,
        hostname=hostname,
    )
