"""Alembic environment: Seatrial runs migrations programmatically on an open connection.

:func:`seatrial.store._migrate.upgrade` puts the connection in ``config.attributes`` and
holds the transaction (and, on PostgreSQL, a lock that serialises concurrent upgrades).
"""

from __future__ import annotations

from alembic import context

from seatrial.errors import StoreError
from seatrial.store._schema import VERSION_TABLE, metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise StoreError(
        "Seatrial's migrations run on an open connection; use seatrial.store.Store.open(url), "
        "which migrates the store, rather than the alembic command"
    )

context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
