"""``seatrial worker``: run attempts of ``seatrial run --backend celery`` on this machine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from seatrial._defaults import DEFAULT_CONCURRENCY
from seatrial.cli._app import app, guarded
from seatrial.cli._options import Lang, WorkerConcurrency
from seatrial.errors import ConfigError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _


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
    lang: Lang = None,
) -> None:
    """Run attempts sent by `seatrial run --backend celery` (broker: $SEATRIAL_BROKER_URL,
    store: $SEATRIAL_DB_URL); SIGTERM finishes the attempts in flight, then exits."""
    from seatrial.config import load_config
    from seatrial.distributed import LOG_LEVELS, PROJECT_DIR_ENV, start_worker
    from seatrial.i18n import reader_language, set_language

    folder = project or Path(os.environ.get(PROJECT_DIR_ENV) or Path.cwd())
    set_language(reader_language(lang, load_config(folder).language))
    if loglevel.lower() not in LOG_LEVELS:
        raise ConfigError(
            _("--loglevel {level}: choose one of {levels}").format(
                level=loglevel, levels=", ".join(LOG_LEVELS)
            )
        )
    start_worker(
        concurrency=concurrency,
        queue=queue,
        loglevel=loglevel.lower(),
        project_dir=project,
        hostname=hostname,
    )
