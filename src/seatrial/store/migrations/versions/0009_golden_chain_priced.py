"""The golden sets' hash chain (each version and change stores a hash of its content), and
whether a model call's model had a price.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07

Sets written before this revision get their chain here, from the rows as they stand, so
``seatrial datasets verify`` vouches for every set from the upgrade on (an edit made before
the upgrade cannot be told from the history). The hashing is
:mod:`seatrial.store._golden_chain`'s, which never changes for a given format: a new format
comes with its own migration.

``model_calls.priced`` stays NULL for calls booked before: whether their model had a price
then is not known, so no report calls them unpriced.

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from seatrial.store._golden_chain import change_hash, version_hash

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_versions = sa.table(
    "golden_versions",
    sa.column("dataset", sa.Text()),
    sa.column("version", sa.Integer()),
    sa.column("created_at", sa.Float()),
    sa.column("who", sa.Text()),
    sa.column("note", sa.Text()),
    sa.column("added", sa.Integer()),
    sa.column("retired", sa.Integer()),
    sa.column("cases", sa.Integer()),
    sa.column("content_hash", sa.String(64)),
    sa.column("previous_hash", sa.String(64)),
)
_changes = sa.table(
    "golden_changes",
    sa.column("dataset", sa.Text()),
    sa.column("version", sa.Integer()),
    sa.column("position", sa.Integer()),
    sa.column("action", sa.String(8)),
    sa.column("case_id", sa.Text()),
    sa.column("category", sa.Text()),
    sa.column("definition", sa.JSON()),
    sa.column("reason", sa.Text()),
    sa.column("content_hash", sa.String(64)),
)


def upgrade() -> None:
    """Add the hash columns, compute the chain of every existing set, add ``priced``."""
    op.add_column("model_calls", sa.Column("priced", sa.Boolean(), nullable=True))
    op.add_column("golden_versions", sa.Column("content_hash", sa.String(64), nullable=True))
    op.add_column("golden_versions", sa.Column("previous_hash", sa.String(64), nullable=True))
    op.add_column("golden_changes", sa.Column("content_hash", sa.String(64), nullable=True))
    connection = op.get_bind()
    changes: dict[tuple[str, int], list[str]] = {}
    rows = connection.execute(
        sa.select(_changes).order_by(_changes.c.dataset, _changes.c.version, _changes.c.position)
    ).mappings()
    for row in list(rows):
        digest = change_hash(dict(row))
        changes.setdefault((row["dataset"], row["version"]), []).append(digest)
        connection.execute(
            sa.update(_changes)
            .where(
                _changes.c.dataset == row["dataset"],
                _changes.c.version == row["version"],
                _changes.c.position == row["position"],
            )
            .values(content_hash=digest)
        )
    previous: dict[str, str] = {}
    rows = connection.execute(
        sa.select(_versions).order_by(_versions.c.dataset, _versions.c.version)
    ).mappings()
    for row in list(rows):
        link = previous.get(row["dataset"])
        digest = version_hash(dict(row), changes.get((row["dataset"], row["version"]), []), link)
        previous[row["dataset"]] = digest
        connection.execute(
            sa.update(_versions)
            .where(_versions.c.dataset == row["dataset"], _versions.c.version == row["version"])
            .values(content_hash=digest, previous_hash=link)
        )


def downgrade() -> None:
    """Drop the hash columns (the history itself stays) and ``priced``."""
    op.drop_column("model_calls", "priced")
    op.drop_column("golden_changes", "content_hash")
    op.drop_column("golden_versions", "previous_hash")
    op.drop_column("golden_versions", "content_hash")
