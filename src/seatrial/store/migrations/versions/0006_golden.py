"""Golden sets (an append-only log of versions and their changes) and pending cases.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    """Create ``golden_versions``, ``golden_changes`` and ``pending_cases``."""
    op.create_table(
        "golden_versions",
        sa.Column("dataset", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("who", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("retired", sa.Integer(), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("dataset", "version", name="pk_golden_versions"),
    )
    op.create_table(
        "golden_changes",
        sa.Column("dataset", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(8), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("definition", _json(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("dataset", "version", "position", name="pk_golden_changes"),
        sa.ForeignKeyConstraint(
            ["dataset", "version"],
            ["golden_versions.dataset", "golden_versions.version"],
            name="fk_golden_changes_dataset_golden_versions",
        ),
    )
    op.create_table(
        "pending_cases",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("dataset", sa.Text(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("definition", _json(), nullable=False),
        sa.Column("origin", sa.String(8), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("parent_case_id", sa.Text(), nullable=True),
        sa.Column("proposals", _json(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("decided_by", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_pending_cases"),
    )
    op.create_index("ix_pending_cases_status_created_at", "pending_cases", ["status", "created_at"])
    op.create_index("ix_pending_cases_dataset_status", "pending_cases", ["dataset", "status"])


def downgrade() -> None:
    """Drop the golden sets and the pending cases (and their data)."""
    op.drop_table("pending_cases")
    op.drop_table("golden_changes")
    op.drop_table("golden_versions")
