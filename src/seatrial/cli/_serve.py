"""``seatrial serve``: the web dashboard over the store."""

from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import project
from seatrial.cli._options import Db, Host, Lang, Port
from seatrial.errors import ConfigError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    import socket

    from seatrial.config import Config
    from seatrial.i18n import Language
    from seatrial.schedule import SchedulerThread
    from seatrial.store import Store

SERVE_GC_THRESHOLD = 10_000
"""Gen-0 threshold of the garbage collector in ``seatrial serve`` (Python's default is 2,000)."""


@app.command()
@guarded
def serve(
    host: Host = "127.0.0.1",
    port: Port = 8700,
    token: Annotated[
        str | None,
        typer.Option(help=N_("Require this token on every request (default: $SEATRIAL_TOKEN).")),
    ] = None,
    db: Db = None,
    no_schedules: Annotated[
        bool,
        typer.Option(
            "--no-schedules", help=N_("Do not run the schedules of seatrial.yaml `schedules:`.")
        ),
    ] = False,
    lang: Lang = None,
) -> None:
    """Serve the dashboard: runs, cases, trace timelines, comparisons, the review queue.

    It also receives OTLP/HTTP traces at /v1/traces (protobuf or JSON, gzip), masked with
    the project's `mask:` settings before they are stored, and runs the jobs of seatrial.yaml
    `schedules:` (each due time once, however many servers share the store).
    """
    from seatrial.config import resolve_db_url
    from seatrial.gateway import listening_socket
    from seatrial.i18n import reader_language, set_language
    from seatrial.store import Store
    from seatrial.web import LOOPBACK_HOSTS, TOKEN_ENV, check_token

    config = project()
    language = reader_language(lang, config.language)  # a page's, when its reader says none
    set_language(language)  # the lines printed here, and the errors (each page sets its own)
    token = token or os.environ.get(TOKEN_ENV) or None
    if host not in LOOPBACK_HOSTS and not token:
        raise ConfigError(
            _(
                "--host {host} lets other machines in: give --token TOKEN (or set {env}); "
                "every request must then carry it"
            ).format(host=host, env=TOKEN_ENV)
        )
    check_token(token)  # before anything is opened: a short token changes nothing on disk
    # Bound first: a port in use is bad input, refused before an address is announced.
    with listening_socket(host, port) as sock:
        db_url = resolve_db_url(db, config)
        store = Store.open(db_url, project_dir=config.project_dir)
        try:
            _serve(
                store,
                sock,
                host,
                token,
                config,
                db_url,
                no_schedules=no_schedules,
                language=language,
            )
        finally:
            store.close()


def _serve(
    store: Store,
    sock: socket.socket,
    host: str,
    token: str | None,
    config: Config,
    db_url: str | None,
    *,
    no_schedules: bool,
    language: Language,
) -> None:
    """Serve the dashboard over ``store`` on ``sock`` (and run the schedules) until stopped."""
    import uvicorn

    from seatrial.dataset import Masker
    from seatrial.web import create_app

    scheduler = _scheduler(config, store, db_url) if config.schedules and not no_schedules else None
    dashboard = create_app(
        store,
        token=token,
        user=os.environ.get("USER", ""),
        loopback_only=not token,
        masker=Masker(config.mask),
        schedules=config.schedules,
        scheduling=scheduler is not None,
        language=language,
    )
    # A long-lived server: what start-up loaded is never garbage, so the collector stops
    # scanning it, and it runs less often while spans stream in (docs/performance.md).
    gc.freeze()
    gc.set_threshold(SERVE_GC_THRESHOLD, 50, 100)
    port = sock.getsockname()[1]  # the one taken when --port 0
    shown = f"[{host}]" if ":" in host else host
    console.print(
        _("Seatrial dashboard on {url} (store {store})").format(
            url=f"http://{shown}:{port}/", store=store.url
        )
    )
    try:
        if scheduler is not None:
            scheduler.start()
        uvicorn.Server(uvicorn.Config(dashboard, log_level="warning")).run(sockets=[sock])
    finally:
        if scheduler is not None:
            scheduler.stop()


def _scheduler(config: Config, store: Store, db_url: str | None) -> SchedulerThread:
    """The scheduler of ``schedules:`` on its own thread (uvicorn owns the main loop)."""
    import datetime as dt

    from seatrial.schedule import Scheduler, SchedulerThread

    def say(line: str) -> None:
        console.print(escape(line), highlight=False)

    scheduler = Scheduler(config, store, db=db_url, say=say)
    for schedule in config.schedules:
        due = schedule.next_after(dt.datetime.now(dt.UTC))
        say(
            _("schedule {name}: {job}, next due {due}").format(
                name=schedule.name, job=schedule.job, due=schedule.shown(due)
            )
        )
    return SchedulerThread(scheduler)
