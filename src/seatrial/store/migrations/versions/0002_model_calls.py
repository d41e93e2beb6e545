"""The spend ledger: one row per model call made through the gateway.

Revision ID: 0002
Revises: 0001
Create Date: 2025-11-29

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the ``model_calls`` table and its index."""
    op.create_table(
        "model_calls",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("case_id", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=True),
        sa.Column("purpose", sa.String(16), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("provider_model", sa.Text(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cached_input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("fallback_used", sa.Boolean(), nullable=False),
        sa.Column("fault", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_model_calls"),
    )
    op.create_index("ix_model_calls_run_id_purpose", "model_calls", ["run_id", "purpose"])


def downgrade() -> None:
    """Drop the ledger (and its data)."""
    op.drop_table("model_calls")
