"""The read model's connection: what the dashboard's named queries read through.

The dashboard and other readers call the query functions of ``seatrial.store``
(``_reads_runs``, ``_reads_boards``, ``_reads_review``) instead of writing SQL against the
tables, so a schema change is made, and tested, inside the store alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy.engine import Connection

from seatrial.store._translate import translated

if TYPE_CHECKING:
    from seatrial.store._store import Store


@contextmanager
def reading(store: Store, action: str) -> Iterator[Connection]:
    """A connection for one read; a database failure becomes a StoreError naming ``action``."""
    with translated(store.engine.url, action), store.engine.connect() as connection:
        yield connection
