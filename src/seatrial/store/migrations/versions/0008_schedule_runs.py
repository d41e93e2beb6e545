"""Claims of scheduled jobs: which server runs a schedule's due time, and how it ended.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    """Create ``schedule_runs``, keyed by ``(schedule, due_at)``."""
    op.create_table(
        "schedule_runs",
        sa.Column("schedule", sa.Text(), nullable=False),
        sa.Column("due_at", sa.Float(), nullable=False),
        sa.Column("claimed_by", sa.Text(), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("run_ids", _json(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("schedule", "due_at", name="pk_schedule_runs"),
    )


def downgrade() -> None:
    """Drop ``schedule_runs`` (and the history of scheduled jobs)."""
    op.drop_table("schedule_runs")
