"""Where the project is, and what a command that only reads the store needs of its
``seatrial.yaml``: ``db:`` and ``language:``, read without loading the models every other key
needs (a run's, the gateway's, the judge's, the alerts'), so ``seatrial runs`` starts fast.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seatrial.config._file import Config
    from seatrial.i18n import Language

CONFIG_FILE = "seatrial.yaml"
"""The configuration file's name."""

DB_URL_ENV = "SEATRIAL_DB_URL"
"""Environment variable holding the store URL; it wins over ``db:`` in the file."""

DASHBOARD_URL_ENV = "SEATRIAL_DASHBOARD_URL"
"""Environment variable holding the dashboard's address; it wins over ``dashboard_url:``."""

_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""How a store URL starts (``sqlite://``, ``postgresql+psycopg://``); a ``--db`` that does
not is a file path."""


@dataclass(frozen=True)
class StoreSettings:
    """What a command that only reads the store needs of the project."""

    project_dir: Path
    """The project folder: the one holding ``seatrial.yaml``, else the starting folder."""
    file: Path | None
    """The ``seatrial.yaml`` read, or None when there is none."""
    db: str | None
    """``db:``, as written."""
    language: Language | None
    """``language:``, as Seatrial names it (``en``, ``zh_CN``), or None."""


def find_config(start: Path) -> Path | None:
    """The ``seatrial.yaml`` in ``start`` or the nearest parent holding one."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if (candidate / CONFIG_FILE).is_file():
            return candidate / CONFIG_FILE
    return None


def read_store_settings(start: Path) -> StoreSettings:
    """``db:`` and ``language:`` of the project found from ``start``, the other keys unread.

    A file whose ``db:`` or ``language:`` cannot be taken as written (the file is not YAML,
    a value is not text, a language Seatrial does not speak) is read whole, as every command
    reads it, so the error names the line and the fix as theirs does.

    Raises:
        ConfigError: the file is invalid.
    """
    from seatrial.i18n import language_of

    file = find_config(start)
    if file is None:
        folder = start.resolve() if start.is_dir() else start.resolve().parent
        return StoreSettings(project_dir=folder, file=None, db=None, language=None)
    data = _yaml_mapping(file)
    if data is not None:
        db, language = data.get("db"), data.get("language")
        spoken = language_of(language) if isinstance(language, str) else None
        if (db is None or isinstance(db, str)) and (language is None or spoken is not None):
            return StoreSettings(project_dir=file.parent, file=file, db=db, language=spoken)
    from seatrial.config._file import load_config

    config = load_config(start)
    return StoreSettings(
        project_dir=config.project_dir, file=config.file, db=config.db, language=config.language
    )


def _yaml_mapping(file: Path) -> dict[str, Any] | None:
    """The file's top-level mapping, or None when it cannot be read as one."""
    import yaml

    loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    try:
        data = yaml.load(file.read_text(encoding="utf-8-sig"), Loader=loader)  # noqa: S506
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def resolve_db_url(cli_value: str | None, config: Config | StoreSettings) -> str | None:
    """The store URL: ``--db``, else ``SEATRIAL_DB_URL``, else ``db:``; None means the
    default SQLite file in the project folder.

    A ``--db`` without a URL scheme (``.seatrial/seatrial.db``, the default's own spelling)
    is a SQLite file, relative to the current folder as any path on the command line is.
    """
    if cli_value and not _URL_SCHEME.match(cli_value):
        return f"sqlite:///{Path(cli_value).expanduser().resolve()}"
    return cli_value or os.environ.get(DB_URL_ENV) or config.db or None
