"""Attempt snapshots: what each attempt ran with, for ``seatrial replay``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    """Add the nullable ``attempts.snapshot`` column; attempts stored before keep NULL.

    A plain ``ADD COLUMN`` on both databases: no copy of the (large) attempts table.
    """
    op.add_column("attempts", sa.Column("snapshot", _json(), nullable=True))


def downgrade() -> None:
    """Drop ``attempts.snapshot`` (and the snapshots)."""
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("snapshot")
