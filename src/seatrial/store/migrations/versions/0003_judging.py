"""The judge's tables: calibrations, the review queue, and human labels.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    """Create ``calibrations``, ``review_items`` and ``labels`` with their indexes."""
    op.create_table(
        "calibrations",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("judge_model", sa.Text(), nullable=False),
        sa.Column("prompt_hash", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("agreement", sa.Float(), nullable=False),
        sa.Column("record", _json(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_calibrations"),
    )
    op.create_index(
        "ix_calibrations_judge_model_prompt_hash_created_at",
        "calibrations",
        ["judge_model", "prompt_hash", "created_at"],
    )
    op.create_table(
        "review_items",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("assertion_id", sa.Text(), nullable=False),
        sa.Column("why", sa.String(16), nullable=False),
        sa.Column("judge_model", sa.Text(), nullable=False),
        sa.Column("judge_verdict", sa.String(16), nullable=False),
        sa.Column("judge_reason", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("input", sa.Text(), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("label", sa.String(8), nullable=True),
        sa.Column("failure_type", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("who", sa.Text(), nullable=True),
        sa.Column("labelled_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_review_items"),
    )
    op.create_index("ix_review_items_status_created_at", "review_items", ["status", "created_at"])
    op.create_index("ix_review_items_run_id_status", "review_items", ["run_id", "status"])
    op.create_table(
        "labels",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("item_id", sa.String(32), nullable=True),
        sa.Column("input", sa.Text(), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("label", sa.String(8), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("failure_type", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("who", sa.Text(), nullable=False),
        sa.Column("labelled_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_labels"),
        sa.UniqueConstraint("item_id", name="uq_labels_item_id"),
    )
    op.create_index("ix_labels_source_labelled_at", "labels", ["source", "labelled_at"])


def downgrade() -> None:
    """Drop the judge's tables (and their data)."""
    op.drop_table("labels")
    op.drop_table("review_items")
    op.drop_table("calibrations")
