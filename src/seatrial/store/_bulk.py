"""Bulk inserts, the store's hot path: ``COPY`` into PostgreSQL, ``executemany`` elsewhere,
or many rows per ``INSERT`` into SQLite where the caller asks.

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

On SQLite, ``executemany`` steps one statement per row, and each step releases the GIL
and takes it back: the runner's writer thread, writing while the event loop runs attempts,
switched threads for every row. ``many_rows`` writes up to 64 rows per statement instead
(:func:`sqlite_rows_per_statement`): 10% fewer of the writer's instructions for the
runner's attempts (callgrind) and a GIL round trip per statement, not per row. A statement
of many rows needs a statement journal (its rows are undone alone when one is refused):
the caller keeps it in memory (``StoreCore._transact(..., many_rows=True)``), or SQLite
writes it to a temporary file, which doubled the writes of a commit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain
from typing import Any, Literal

from sqlalchemy import JSON, Table
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError

from seatrial.store._schema import JSONDocument

_PLACEHOLDERS = {"qmark": "?", "format": "%s", "pyformat": "%s"}

COPY_MIN_ROWS = 8
"""Fewer rows than this go through ``executemany``: COPY's extra round-trips cost more."""

SQLITE_MOST_ROWS = 64
"""The most rows one SQLite ``INSERT`` statement writes."""

SQLITE_MOST_PARAMETERS = 999
"""The most parameters one SQLite statement takes: the limit of SQLite before 3.32 (later
versions take 32,766)."""

Mode = Literal["auto", "copy", "executemany"]


def insert_many(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: list[tuple[Any, ...]],
    mode: Mode = "auto",
    *,
    many_rows: bool = False,
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table``, in this transaction.

    ``mode`` ``auto`` copies into PostgreSQL (psycopg 3) and runs one ``executemany``
    elsewhere (SQLite, psycopg2); ``copy`` and ``executemany`` force one (benchmarks).
    ``many_rows`` writes many rows per statement into SQLite in ``auto`` mode, for a
    transaction whose statement journal is kept in memory.
    """
    if not rows:
        return
    if mode == "copy" or (
        mode == "auto" and len(rows) >= COPY_MIN_ROWS and can_copy(connection.dialect)
    ):
        _copy(connection, table, tuple(columns), rows)
    elif many_rows and mode == "auto" and connection.dialect.name == "sqlite" and len(rows) > 1:
        _insert_sqlite(connection, table, tuple(columns), rows)
    else:
        connection.exec_driver_sql(_insert_sql(connection.dialect, table, tuple(columns)), rows)


def can_copy(dialect: Dialect) -> bool:
    """Whether rows can be streamed with COPY: PostgreSQL through psycopg 3."""
    return dialect.name == "postgresql" and dialect.driver == "psycopg"


def _copy(
    connection: Connection, table: Table, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    sql = _copy_sql(connection.dialect, table, columns)

    def write(cursor: Any) -> None:
        with cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)

    _on_driver(connection, sql, write)


def sqlite_rows_per_statement(width: int) -> int:
    """How many rows of ``width`` columns one SQLite ``INSERT`` writes: a power of two (the
    rows left over go in statements of the lower powers), within the parameter limit."""
    most = max(1, min(SQLITE_MOST_ROWS, SQLITE_MOST_PARAMETERS // width))
    return 1 << (most.bit_length() - 1)


def _insert_sqlite(
    connection: Connection, table: Table, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    """``rows`` in statements of :func:`sqlite_rows_per_statement` rows, then the rest in
    one statement for each of its binary digits: at most seven statement texts per table,
    each prepared once and kept in the driver's statement cache."""
    size = sqlite_rows_per_statement(len(columns))
    whole = len(rows) - len(rows) % size

    def write(cursor: Any) -> None:
        if whole:
            chunks = [tuple(chain.from_iterable(rows[i : i + size])) for i in range(0, whole, size)]
            cursor.executemany(_insert_sql(connection.dialect, table, columns, size), chunks)
        start, part = whole, size // 2
        while start < len(rows):
            if len(rows) - start >= part:
                flat = tuple(chain.from_iterable(rows[start : start + part]))
                cursor.execute(_insert_sql(connection.dialect, table, columns, part), flat)
                start += part
            part //= 2

    _on_driver(connection, f"INSERT INTO {table.name}", write)


def _on_driver(connection: Connection, sql: str, work: Callable[[Any], None]) -> None:
    """``work(cursor)`` on the driver's own cursor, in this transaction; the driver's errors
    raised as SQLAlchemy raises them for a statement it runs itself: the same exception
    classes, and a connection the server closed dropped from the pool, not reused."""
    driver_connection: Any = connection.connection.driver_connection
    dbapi: Any = connection.dialect.loaded_dbapi
    cursor = driver_connection.cursor()
    try:
        work(cursor)
    except dbapi.Error as exc:
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
    finally:
        cursor.close()


@lru_cache(maxsize=32)
def _copy_sql(dialect: Dialect, table: Table, columns: tuple[str, ...]) -> str:
    quote = dialect.identifier_preparer.quote
    return f"COPY {quote(table.name)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"


@lru_cache(maxsize=64)
def _insert_sql(dialect: Dialect, table: Table, columns: tuple[str, ...], rows: int = 1) -> str:
    placeholder = _PLACEHOLDERS.get(str(dialect.paramstyle))
    if placeholder is None:
        raise ValueError(f"no bulk insert for the {dialect.paramstyle} parameter style")
    quote = dialect.identifier_preparer.quote
    values = []
    for name in columns:
        # JSON text reaches PostgreSQL as a string; say what it is.
        json_column = isinstance(table.c[name].type, (JSON, JSONDocument))
        is_json = json_column and dialect.name == "postgresql"
        values.append(f"{placeholder}::jsonb" if is_json else placeholder)
    row = f"({', '.join(values)})"
    return (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES {', '.join([row] * rows)}"
    )
