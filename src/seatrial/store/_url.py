"""Which database a store lives in: the URL from the caller, the environment, or the default."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from seatrial.errors import StoreError
from seatrial.i18n import gettext as _

DB_URL_ENV = "SEATRIAL_DB_URL"
"""Environment variable naming the store's database URL (``--db`` wins over it)."""

DEFAULT_DB_PATH = Path(".seatrial") / "seatrial.db"
"""The default SQLite file, relative to the project folder."""


# The drivers Seatrial's migrations and tests cover; anything else would fail later and
# more obscurely (async drivers, MySQL's different DDL).
_SUPPORTED = {
    "sqlite": {"pysqlite"},
    "postgresql": {"psycopg", "psycopg2"},
}

_PASSWORD_IN_TEXT = re.compile(r"(://[^:/@\s]*:)([^@\s]*)(@)")


def mask_url(url: str | URL) -> str:
    """The URL with its password replaced by ``***``, safe to print or log."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        # A URL SQLAlchemy cannot parse may still carry a password in the usual place.
        return _PASSWORD_IN_TEXT.sub(r"\1***\3", url)


def resolve_url(url: str | None, project_dir: Path | None = None) -> URL:
    """The URL to open: ``url``, else ``$SEATRIAL_DB_URL``, else the project's SQLite file.

    ``postgresql://`` and ``postgres://`` select the psycopg 3 driver. A relative SQLite
    path is taken relative to ``project_dir`` (the current folder when not given), and the
    folder that will hold the file is created.
    """
    project = Path(project_dir) if project_dir is not None else Path.cwd()
    text = url or os.environ.get(DB_URL_ENV) or ""
    if not text:
        return _sqlite_file(project / DEFAULT_DB_PATH)
    try:
        parsed = make_url(text)
    except ArgumentError as exc:
        raise StoreError(
            _(
                "cannot read the database URL {url}: {exc}; write it as "
                "sqlite:///path/to/file.db or postgresql://user@host:5432/db ({hint})"
            ).format(
                url=repr(mask_url(text)),
                exc=exc,
                hint=_("check --db or {variable}").format(variable=DB_URL_ENV),
            )
        ) from exc
    backend = "postgresql" if parsed.get_backend_name() == "postgres" else parsed.get_backend_name()
    drivers = _SUPPORTED.get(backend)
    if drivers is None:
        raise StoreError(
            _(
                "cannot open {url}: Seatrial stores runs in SQLite or PostgreSQL, "
                "not {backend}; {hint}"
            ).format(
                url=mask_url(parsed),
                backend=repr(backend),
                hint=_("check --db or {variable}").format(variable=DB_URL_ENV),
            )
        )
    if backend == "postgresql":
        driver = parsed.get_driver_name() if "+" in parsed.drivername else "psycopg"
        if driver not in drivers:
            raise StoreError(
                _(
                    "cannot open {url}: the driver {driver} is not supported; use "
                    'postgresql:// (psycopg 3, pip install "seatrial[postgres]"); {hint}'
                ).format(
                    url=mask_url(parsed),
                    driver=repr(driver),
                    hint=_("check --db or {variable}").format(variable=DB_URL_ENV),
                )
            )
        return parsed.set(drivername=f"postgresql+{driver}")
    return _sqlite_url(parsed, project)


def _sqlite_url(parsed: URL, project: Path) -> URL:
    database = parsed.database or ""
    if database in ("", ":memory:") or parsed.query.get("uri") == "true":
        return parsed
    path = Path(database).expanduser()
    return _sqlite_file(path if path.is_absolute() else project / path, parsed)


def _sqlite_file(path: Path, parsed: URL | None = None) -> URL:
    path = path.resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            _(
                "cannot create the folder {parent} for the SQLite store: {exc}; "
                "choose a writable place ({hint})"
            ).format(
                parent=path.parent,
                exc=exc,
                hint=_("check --db or {variable}").format(variable=DB_URL_ENV),
            )
        ) from exc
    base = parsed if parsed is not None else make_url("sqlite://")
    return base.set(database=str(path))


def is_memory(url: URL) -> bool:
    """Whether the URL names an in-memory SQLite database."""
    return url.get_backend_name() == "sqlite" and (url.database or "") in ("", ":memory:")
