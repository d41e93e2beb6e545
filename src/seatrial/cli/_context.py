"""What every command works in: the project (``seatrial.yaml`` of the current folder), its
store, and the person at the keyboard.

The library is imported when a helper runs, not when ``seatrial`` starts
(``tests/cli/test_startup.py``).
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seatrial.config import Config, StoreSettings
    from seatrial.store import Store


def project() -> Config:
    """The project the command runs in: ``seatrial.yaml`` found from the current folder."""
    from seatrial.config import load_config

    return load_config(Path.cwd())


def store_settings() -> StoreSettings:
    """What a command that only reads the store needs of the project: ``db:`` and
    ``language:`` of the ``seatrial.yaml`` found from the current folder."""
    from seatrial.config import read_store_settings

    return read_store_settings(Path.cwd())


def open_store(db: str | None, config: Config | StoreSettings | None = None) -> Store:
    """The store ``--db`` names, else the project's (``SEATRIAL_DB_URL``, ``seatrial.yaml``,
    ``.seatrial/seatrial.db``); ``config`` when the command already read the project."""
    from seatrial.config import resolve_db_url
    from seatrial.store import Store

    config = config or store_settings()
    return Store.open(resolve_db_url(db, config), project_dir=config.project_dir)


def speak_reader_language(option: str | None, config: Config | StoreSettings) -> None:
    """Print and write in the reader's language for the rest of the command: ``--lang``
    (``option``), ``SEATRIAL_LANG``, the project's ``language:``, the locale (docs/i18n.md).

    Raises:
        InputError: ``--lang`` or ``SEATRIAL_LANG`` names no language Seatrial speaks.
    """
    from seatrial.i18n import reader_language, set_language

    set_language(reader_language(option, config.language))


def default_who() -> str:
    """Who a change is recorded as when ``--who`` is not given."""
    # $USER first: it is what people set in CI and containers, where getpass may not work.
    try:
        return os.environ.get("USER") or getpass.getuser()
    except (KeyError, OSError):
        return ""
