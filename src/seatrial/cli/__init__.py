"""The ``seatrial`` command: thin, it parses, calls the library and prints."""

from seatrial.cli import (  # noqa: F401  (each registers its commands)
    _cases,
    _commands,
    _compare,
    _datasets,
    _diff,
    _drift,
    _expand,
    _failures,
    _from_trace,
    _gateway,
    _import,
    _ingest,
    _judge,
    _mask,
    _nightly,
    _rerun,
    _review,
    _run,
    _serve,
)
from seatrial.cli._app import app, main

__all__ = ["app", "main"]
