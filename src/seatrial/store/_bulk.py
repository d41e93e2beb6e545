"""Bulk inserts through the driver's ``executemany``: the store's hot path.

SQLAlchemy's Core insert builds a parameter dict and runs every value through its type
processors for each row; for the thousands of span rows of a large run that costs more
than the database's own work. Rows here are tuples of values the driver takes as they are
(JSON columns hold text from :func:`~seatrial.store._engine.raw_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import JSON, Table
from sqlalchemy.engine import Connection, Dialect

_PLACEHOLDERS = {"qmark": "?", "format": "%s", "pyformat": "%s"}


def insert_many(
    connection: Connection, table: Table, columns: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table`` in one executemany."""
    if rows:
        connection.exec_driver_sql(_insert_sql(connection.dialect, table, tuple(columns)), rows)


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
