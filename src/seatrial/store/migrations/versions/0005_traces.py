"""Ingested production traces: ``traces`` (one summary row per trace) and ``trace_spans``.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Migrations are history: this file spells its types out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    """Create ``traces`` with the browser's indexes and ``trace_spans``."""
    op.create_table(
        "traces",
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("service", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("user_id", sa.Text(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("span_count", sa.Integer(), nullable=False),
        sa.Column("error", sa.Boolean(), nullable=False),
        sa.Column("tools", _json(), nullable=False),
        sa.Column("models", _json(), nullable=False),
        sa.Column("model_calls", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("agent_input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("agent_output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("masked", _json(), nullable=False),
        sa.Column("resource", _json(), nullable=False),
        sa.Column("checks", _json(), nullable=False),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("trace_id", name="pk_traces"),
    )
    op.create_index("ix_traces_started_at", "traces", ["started_at"])
    op.create_index("ix_traces_service_started_at", "traces", ["service", "started_at"])
    op.create_table(
        "trace_spans",
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("span_id", sa.Text(), nullable=False),
        sa.Column("parent_span_id", sa.Text(), nullable=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("start_time_unix_nano", sa.BigInteger(), nullable=False),
        sa.Column("end_time_unix_nano", sa.BigInteger(), nullable=True),
        sa.Column("attributes", _json(), nullable=False),
        sa.Column("events", _json(), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("status_message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["trace_id"],
            ["traces.trace_id"],
            name="fk_trace_spans_trace_id_traces",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("trace_id", "position", name="pk_trace_spans"),
        sa.UniqueConstraint("trace_id", "span_id", name="uq_trace_spans_trace_id_span_id"),
    )


def downgrade() -> None:
    """Drop the ingested traces (and their spans)."""
    op.drop_table("trace_spans")
    op.drop_table("traces")
