"""Turning SQLAlchemy and driver exceptions into :class:`~seatrial.errors.StoreError`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError

from seatrial.errors import StoreError
from seatrial.i18n import gettext as _
from seatrial.store._url import DB_URL_ENV, mask_url

_MAX_REASON = 400

# SQLSTATEs of a connection the server ended or never finished opening: class 08
# (connection exception) and the "operator intervention" ones pg_terminate_backend, a crash
# and a server still starting send.
_LOST_STATES = ("57P01", "57P02", "57P03")


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the database connection was lost rather than the statement refused.

    True for a connection SQLAlchemy invalidated (the server closed it: a restart,
    ``pg_terminate_backend``, a network cut) and for a PostgreSQL server that could not be
    reached or was shutting down; the transaction may be run again on a new connection.
    False for everything SQLite raises: it has no connection to lose, and a locked
    database has already waited out its busy timeout.
    """
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if not hasattr(exc.orig, "sqlstate"):  # not a PostgreSQL driver's error
        return False
    state = getattr(exc.orig, "sqlstate", None)
    if state is None:  # no answer from a server at all: refused, reset, timed out
        return isinstance(exc, OperationalError)
    return str(state).startswith("08") or state in _LOST_STATES


def reason(exc: BaseException, url: URL | None = None) -> str:
    """The driver's own words, on one line, short, without the URL's password.

    SQLAlchemy's text for a failed ``executemany`` carries every parameter of the batch;
    the driver's message is what a user can act on.
    """
    source = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = " ".join(str(source).split()) or type(source).__name__
    if url is not None and url.password:
        text = text.replace(str(url.password), "***")
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."


@contextmanager
def translated(url: URL, action: str, *, integrity: str = "", note: str = "") -> Iterator[None]:
    """Raise :class:`StoreError` ("cannot ACTION in the store at URL: why; what to do").

    ``integrity`` says what to do when a constraint refused the write; ``note`` (e.g. what
    was and was not stored) comes before the advice whatever went wrong.
    """
    try:
        yield
    except SQLAlchemyError as exc:
        hint = integrity if integrity and isinstance(exc, IntegrityError) else ""
        raise StoreError(message(url, action, exc, hint, note)) from exc


def message(url: URL, action: str, exc: BaseException, hint: str = "", note: str = "") -> str:
    """The StoreError message for ``exc`` raised while doing ``action``."""
    if not hint:
        if isinstance(exc, OperationalError):
            hint = _(
                "check that the database is running and reachable, and --db or {variable}"
            ).format(variable=DB_URL_ENV)
        elif isinstance(exc, IntegrityError):
            hint = _("the store already holds this record or lacks the one it refers to")
        else:
            hint = _(
                "check --db or {variable}; if the store is damaged, point it elsewhere"
            ).format(variable=DB_URL_ENV)
    advice = _("{note}; {hint}").format(note=note, hint=hint) if note else hint
    return _("cannot {action} in the store at {url}: {reason}; {advice}").format(
        action=action, url=mask_url(url), reason=reason(exc, url), advice=advice
    )
