"""Creating the SQLAlchemy engine: SQLite tuned for a writer thread, PostgreSQL as given."""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_core import from_json, to_json
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, create_engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import StaticPool

from seatrial.store._translate import connection_lost
from seatrial.store._url import is_memory

T = TypeVar("T")
log = logging.getLogger("seatrial.store")

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for another process's write lock before failing."""

SQLITE_PAGE_SIZE = 16_384
"""The page size of a new SQLite store, in bytes (SQLite's default is 4 KiB).

SQLite writes each page of a commit to the WAL with a call of its own: the runner's writer
thread, committing a few hundred attempts with their spans at a time, made ~3.4 writes and
~0.8 reads per attempt with 4 KiB pages, ~1 and ~0.2 with 16 KiB (``strace -c``; its
system time per attempt fell by about 40%). A store created with another page size keeps
it: SQLite changes a file's page size only when it is created.
"""

SQLITE_WAL_AUTOCHECKPOINT_BYTES = 40 * 1024 * 1024
"""WAL bytes before SQLite copies them into the database file.

A checkpoint is where WAL mode pays for durability (it syncs both files); ten times
SQLite's default (1,000 pages of 4 KiB) makes them rare during a large run, at the price of
a WAL file of up to about 40 MiB beside the database while the store is open.
"""

WRITE_OPTION = "seatrial_write"
"""Execution option marking a connection that will write (SQLite takes the lock up front)."""

RECONNECT_LIMIT_S = 60.0
"""How long a transaction whose database connection was lost is retried before it fails.

Tries come 0.05 s apart at first, doubling up to :data:`RECONNECT_MAX_DELAY_S`: a server
that restarts, or connections terminated with ``pg_terminate_backend``, cost a run a pause,
not its attempts. Retrying a write whose commit was lost is safe: attempts are stored once
per (run, case, attempt) whichever try committed.
"""

RECONNECT_MAX_DELAY_S = 2.0
"""The longest pause between two tries of a transaction whose connection was lost."""

_ESCAPED_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def without_nul(text: str) -> str:
    """``text`` with NUL characters replaced by U+FFFD.

    PostgreSQL refuses NUL in text and JSONB; a tool that read a binary file must not make
    a whole batch of attempts fail to store, and both backends should keep the same text.
    """
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


class RawJSON(str):
    """Text already serialised by :func:`raw_json`; the engine stores it as it is.

    Serialising straight from the pydantic models (in Rust) instead of dumping them to
    Python dicts first, which SQLAlchemy would then encode again, halves the cost of a batch.
    """

    __slots__ = ()


def raw_json(value: Any) -> RawJSON:
    """JSON text for a JSON column (:func:`json_text`), marked as already serialised."""
    return RawJSON(json_text(value))


def json_text(value: Any) -> str:
    """JSON text for a JSON column: compact, UTF-8 kept, NaN/inf as null, NUL replaced.

    ``value`` may hold pydantic models, which are serialised as their dumps. The text is a
    plain ``str``, for rows handed to the driver as they are (``executemany``, COPY): SQLite's
    driver binds an exact ``str`` at once, a :class:`RawJSON` through its adapter
    (:func:`_bind_without_lookups`), one Python call more a value.
    """
    text = to_json(value, inf_nan_mode="null").decode()
    if "\\u0000" in text:
        text = _ESCAPED_NUL.sub(r"\1\\ufffd", text)
    return text


def dump_json(value: Any) -> str:
    """The engine's JSON serializer: :class:`RawJSON` as it is, anything else via raw_json."""
    return str.__str__(value if isinstance(value, RawJSON) else raw_json(value))


def load_json(text: str | bytes) -> Any:
    """Parse a JSON column's text."""
    return from_json(text)


def make_engine(url: URL) -> Engine:
    """An engine for ``url`` with Seatrial's connection settings.

    SQLite: WAL (readers never block the writer), ``synchronous=NORMAL`` (a commit survives
    a killed process; only a power cut can lose the last ones), a busy timeout, foreign keys
    on, and transactions Seatrial begins itself so that DDL is transactional and a writer
    takes the write lock when it begins (``BEGIN IMMEDIATE``) instead of failing halfway.
    """
    kwargs: dict[str, Any] = {"json_serializer": dump_json, "json_deserializer": load_json}
    if url.get_backend_name() == "sqlite":
        _bind_without_lookups()
        if is_memory(url):
            # One shared connection, or every thread would see its own empty database.
            kwargs.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
        engine = create_engine(url, **kwargs)
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _bind_without_lookups() -> None:
    """Register the sqlite3 module's adapters for the values Seatrial binds that are not
    exactly str, int, float or bytes: RawJSON (bound as its text) and None (as NULL).

    The module binds anything else only after looking for an adapter, and one not found
    costs it an AttributeError formatted and dropped on the way: 19% of the writer thread's
    instructions for the runner's attempts (their JSON and NULL columns; callgrind), 10%
    fewer in all with these adapters. The registry is the module's, for the whole process;
    these adapters bind what the module bound before.
    """
    sqlite3.register_adapter(RawJSON, str)
    sqlite3.register_adapter(type(None), _NULL)


_NULL: Callable[[Any], None] = {}.get
"""Returns None for its argument, in C: the adapter binding None as NULL."""


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # None turns off the sqlite3 module's own implicit BEGINs; _sqlite_on_begin emits ours.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        # Before the journal mode: a new file takes the page size when it is first written.
        cursor.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")
        _use_wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")
        page_size = cursor.execute("PRAGMA page_size").fetchone()[0]
        pages = SQLITE_WAL_AUTOCHECKPOINT_BYTES // page_size
        cursor.execute(f"PRAGMA wal_autocheckpoint = {pages}")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _use_wal(cursor: Any) -> None:
    """Switch the file to WAL (a setting the file keeps), waiting out concurrent openers.

    Changing the journal mode needs the file to itself and SQLite does not run the busy
    handler for it: several processes opening a new store at once would see "database is
    locked" instead of waiting (workers, two `seatrial run` at once).
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _sqlite_on_begin(connection: Connection) -> None:
    immediate = connection.get_execution_options().get(WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def retry_lost_connections(
    action: str,
    body: Callable[[], T],
    *,
    limit_s: float = RECONNECT_LIMIT_S,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``body()``, run again on a fresh connection while its connection is lost, for up to
    ``limit_s`` seconds (:data:`RECONNECT_LIMIT_S`); then the last error is raised.

    ``body`` must open its own connection and transaction, so a retry starts clean; any
    other error is raised at once. Each retry is logged on ``seatrial.store`` as a warning.
    """
    deadline = time.monotonic() + limit_s
    delay = 0.05
    waited = 0.0
    tries = 1
    while True:
        try:
            return body()
        except DBAPIError as exc:
            out_of_time = time.monotonic() + delay > deadline or waited + delay > limit_s
            if not connection_lost(exc) or out_of_time:
                raise
            log.warning(
                "lost the database connection while trying to %s (try %d); retrying in %.2f s",
                action,
                tries,
                delay,
            )
        sleep(delay)
        waited += delay
        delay = min(delay * 2, RECONNECT_MAX_DELAY_S)
        tries += 1
