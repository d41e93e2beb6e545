"""Opening the store's database: the engine, a first connection, the schema migrated."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from seatrial.errors import StoreError
from seatrial.i18n import gettext as _
from seatrial.store._engine import make_engine
from seatrial.store._migrate import upgrade
from seatrial.store._translate import message, reason
from seatrial.store._url import DB_URL_ENV, mask_url, resolve_url


def open_engine(url: str | None = None, project_dir: Path | None = None) -> Engine:
    """The engine of the store ``url`` names (see :func:`resolve_url`), connected once and
    its schema created or migrated.

    Raises:
        StoreError: the database cannot be opened, reached or migrated; the message says
            which, with the URL's password masked.
    """
    resolved = resolve_url(url, project_dir)
    try:
        engine = make_engine(resolved)
    except (SQLAlchemyError, ImportError) as exc:
        raise StoreError(
            _(
                "cannot open the store at {url}: {reason}; for PostgreSQL pip install "
                '"seatrial[postgres]"; check --db or {variable}'
            ).format(url=mask_url(resolved), reason=reason(exc, resolved), variable=DB_URL_ENV)
        ) from exc
    try:
        try:
            engine.connect().close()
        except SQLAlchemyError as exc:
            raise StoreError(
                _("cannot connect to {url}: {reason}; check --db or {variable}").format(
                    url=mask_url(resolved), reason=reason(exc, resolved), variable=DB_URL_ENV
                )
            ) from exc
        try:
            upgrade(engine)
        except SQLAlchemyError as exc:
            raise StoreError(
                message(
                    resolved,
                    _("create or migrate the schema"),
                    exc,
                    hint=_("check that the database user may create tables"),
                )
            ) from exc
    except BaseException:
        engine.dispose()
        raise
    return engine
