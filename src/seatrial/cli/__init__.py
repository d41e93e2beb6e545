"""The ``seatrial`` command: thin, it parses, calls the library and prints."""

from seatrial.cli import _commands, _gateway, _judge, _run  # noqa: F401  (each registers its commands)
from seatrial.cli._app import app, main

__all__ = ["app", "main"]
