"""The ledger keeps failed model calls: ``model_calls.status`` (ok, timeout or error).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07

Until now only answered calls left a row, so a judge that timed out on every call left no
trace of what it cost in time. Rows written before this revision were all answered: ``ok``.

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``model_calls.status``, ``ok`` for every existing row."""
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(sa.Column("status", sa.String(16), nullable=False, server_default="ok"))


def downgrade() -> None:
    """Drop ``model_calls.status`` (and with it the rows' record of failed calls)."""
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_column("status")
