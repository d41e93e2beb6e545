"""The core every part of the store shares: its engine, and how a query runs, retries and
reports what went wrong."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from seatrial.errors import RunNotFound, StoreError
from seatrial.i18n import gettext as _
from seatrial.store._engine import WRITE_OPTION, retry_lost_connections
from seatrial.store._schema import runs
from seatrial.store._translate import translated
from seatrial.store._url import mask_url

T = TypeVar("T")


class StoreCore:
    """The engine a store wraps and the helpers its queries go through."""

    def __init__(self, engine: Engine) -> None:
        """Wrap an engine whose database is already migrated (use :meth:`Store.open`)."""
        self._engine: Engine = engine
        self._writer: Engine = engine.execution_options(**{WRITE_OPTION: True})

    @property
    def url(self) -> str:
        """The database URL with its password masked."""
        return mask_url(self._engine.url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for read-only queries the methods here do not cover."""
        return self._engine

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()

    def _transact(
        self, action: str, body: Callable[[Connection], T], *, many_rows: bool = False
    ) -> T:
        """``body`` in one write transaction, run again on a new connection while the
        connection is lost (for up to RECONNECT_LIMIT_S); wrap it in ``translated``.

        ``many_rows``: ``body`` inserts many rows per statement (``insert_many(...,
        many_rows=True)``); on SQLite the transaction keeps its statement journal in memory.
        """

        def once() -> T:
            if many_rows and self._engine.dialect.name == "sqlite":
                with self._writer.connect() as connection, journal_in_memory(connection):
                    with connection.begin():
                        return body(connection)
            with self._writer.begin() as connection:
                return body(connection)

        return retry_lost_connections(action, once)

    def _reading(self, action: str, body: Callable[[Connection], T], snapshot: bool = False) -> T:
        """``body`` on a read connection, run again while the connection is lost."""

        def once() -> T:
            with self._engine.connect() as connection:
                if snapshot and connection.dialect.name == "postgresql":
                    connection.execution_options(isolation_level="REPEATABLE READ")
                return body(connection)

        with translated(self._engine.url, action):
            return retry_lost_connections(action, once)

    @contextmanager
    def _read(self, action: str, snapshot: bool = False) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._engine.connect() as connection:
            if snapshot and connection.dialect.name == "postgresql":
                # Attempts and their spans are read in two queries; see one commit, not two.
                connection.execution_options(isolation_level="REPEATABLE READ")
            yield connection

    def _check_run(self, connection: Connection, run_id: str) -> None:
        if connection.execute(select(runs.c.run_id).where(runs.c.run_id == run_id)).first() is None:
            raise self._not_found(run_id)

    def _not_found(self, run_id: str) -> RunNotFound:
        return RunNotFound(
            _(
                "no run {run_id} in the store at {url}; `seatrial runs` lists the "
                "stored runs (a unique prefix of an id, or `latest`, also works)"
            ).format(run_id=repr(run_id), url=self.url)
        )

    def _decode(self, build: Callable[[], T]) -> T:
        try:
            return build()
        except ValidationError as exc:
            raise StoreError(
                _(
                    "the store at {url} holds a record this Seatrial cannot read ({count} "
                    "problems, first: {first}); was it written by a newer Seatrial? upgrade "
                    "seatrial"
                ).format(url=self.url, count=exc.error_count(), first=exc.errors()[0]["msg"])
            ) from exc


@contextmanager
def journal_in_memory(connection: Connection) -> Iterator[None]:
    """Keep SQLite's temporary files, statement journals included, in memory until the
    block ends; before a transaction begins and after it ends (SQLite refuses to change
    this setting inside one).

    A statement inserting many rows keeps the pages it changes in a statement journal, so
    that a refused row undoes that statement alone; past 64 KiB SQLite writes that journal
    to a temporary file, which doubled the writes of the runner's commits. Reads keep the
    default: a large sort then spills to disk rather than growing the process.
    """
    driver: Any = connection.connection.driver_connection
    driver.execute("PRAGMA temp_store = MEMORY")
    try:
        yield
    finally:
        if not connection.invalidated:
            driver.execute("PRAGMA temp_store = DEFAULT")
