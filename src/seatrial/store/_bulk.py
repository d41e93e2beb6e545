"""Bulk inserts, the store's hot path: ``COPY`` into PostgreSQL, ``executemany`` elsewhere.

SQLAlchemy's Core insert builds a parameter dict and runs every value through its type
processors for each row; for the thousands of span rows of a large run that costs more
than the database's own work. Rows here are tuples of values the driver takes as they are
(JSON columns hold text from :func:`~seatrial.store._engine.raw_json`).

On PostgreSQL through psycopg 3 the rows are streamed with ``COPY ... FROM STDIN``: against
the driver's pipelined ``executemany`` a run's writes took about two thirds of the wall time,
of the client's CPU and of the server's, and multi-row ``INSERT ... VALUES`` was slower than
both (``benchmarks/store_write.py --modes``; docs/performance.md has the figures). Text COPY
hands each value to the column's own input function, so JSON text lands in ``jsonb`` as it is.
Errors are raised as SQLAlchemy's (a refused key is an ``IntegrityError``, a lost connection
invalidates the connection), exactly as the ``executemany`` path raises them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from sqlalchemy import JSON, Table
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError

_PLACEHOLDERS = {"qmark": "?", "format": "%s", "pyformat": "%s"}

COPY_MIN_ROWS = 8
"""Fewer rows than this go through ``executemany``: COPY's extra round-trips cost more."""

Mode = Literal["auto", "copy", "executemany"]


def insert_many(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: list[tuple[Any, ...]],
    mode: Mode = "auto",
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table``, in this transaction.

    ``mode`` ``auto`` copies into PostgreSQL (psycopg 3) and runs one ``executemany``
    elsewhere (SQLite, psycopg2); ``copy`` and ``executemany`` force one (benchmarks).
    """
    if not rows:
        return
    if mode == "copy" or (
        mode == "auto" and len(rows) >= COPY_MIN_ROWS and can_copy(connection.dialect)
    ):
        _copy(connection, table, tuple(columns), rows)
    else:
        connection.exec_driver_sql(_insert_sql(connection.dialect, table, tuple(columns)), rows)


def can_copy(dialect: Dialect) -> bool:
    """Whether rows can be streamed with COPY: PostgreSQL through psycopg 3."""
    return dialect.name == "postgresql" and dialect.driver == "psycopg"


def _copy(
    connection: Connection, table: Table, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    sql = _copy_sql(connection.dialect, table, columns)
    driver_connection: Any = connection.connection.driver_connection
    dbapi: Any = connection.dialect.loaded_dbapi
    try:
        with driver_connection.cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
    except dbapi.Error as exc:
        # What SQLAlchemy does for a statement it runs itself: the same exception classes,
        # and a connection the server closed is dropped from the pool, not reused.
        lost = connection.dialect.is_disconnect(exc, driver_connection, None)
        if lost:
            connection.invalidate(exc)
        raise DBAPIError.instance(
            sql,
            None,
            exc,
            dbapi.Error,
            hide_parameters=True,
            connection_invalidated=lost,
            dialect=connection.dialect,
        ) from exc


@lru_cache(maxsize=32)
def _copy_sql(dialect: Dialect, table: Table, columns: tuple[str, ...]) -> str:
    quote = dialect.identifier_preparer.quote
    return f"COPY {quote(table.name)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"


@lru_cache(maxsize=32)
def _insert_sql(dialect: Dialect, table: Table, columns: tuple[str, ...]) -> str:
    placeholder = _PLACEHOLDERS.get(str(dialect.paramstyle))
    if placeholder is None:
        raise ValueError(f"no bulk insert for the {dialect.paramstyle} parameter style")
    quote = dialect.identifier_preparer.quote
    values = []
    for name in columns:
        # JSON text reaches PostgreSQL as a string; say what it is.
        is_json = isinstance(table.c[name].type, JSON) and dialect.name == "postgresql"
        values.append(f"{placeholder}::jsonb" if is_json else placeholder)
    return (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join(values)})"
    )
