"""The ``seatrial`` command: thin, it parses, calls the library and prints.

Every command module is imported to start any command (Typer needs them all, ``--help``
included), so a module imports at its top only what defining its commands needs: Typer, Rich,
the app, ``seatrial.errors``. The library a command calls (the store, the gateway, the runner,
the dashboard, clustering) is imported inside the command function, when it runs;
``tests/cli/test_startup.py`` checks that starting loads none of them.
"""

# The order they are imported in is the order `seatrial --help` lists their commands.
from seatrial.cli import (  # noqa: F401, I001  (each registers its commands)
    _alerts,
    _bench,
    _commands,
    _cases,
    _run,
    _ci,
    _compare,
    _contract,
    _review,
    _datasets,
    _diff,
    _drift,
    _expand,
    _failures,
    _from_trace,
    _gateway,
    _gc,
    _github,
    _import,
    _ingest,
    _judge,
    _mask,
    _nightly,
    _rerun,
    _schedules,
    _serve,
    _worker,
)
from seatrial.cli._app import app, console_script, main
from seatrial.cli._help import help_for_every

help_for_every(app)  # help in the reader's language, its lines whole off a terminal

__all__ = ["app", "console_script", "main"]
