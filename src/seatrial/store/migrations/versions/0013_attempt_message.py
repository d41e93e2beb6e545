"""An attempt's reason as a message: its id and parameters, so it reads in any language.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    """Add the nullable ``attempts.message`` column; attempts stored before keep NULL and
    are read in the English of their ``reason``.

    A plain ``ADD COLUMN`` on both databases: no copy of the (large) attempts table.
    """
    op.add_column("attempts", sa.Column("message", _json(), nullable=True))


def downgrade() -> None:
    """Drop ``attempts.message`` (the reasons stay, in English)."""
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("message")
