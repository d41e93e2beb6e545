"""Indexes for PostgreSQL at volume: runs of one suite and agent, newest first.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

The flaky-case check, drift and staleness reports, ``--baseline latest`` and the
leaderboard ask for the runs of one suite *and* agent, newest first; with only
``(suite, started_at)`` and ``(agent, started_at)`` the database reads every run of the
suite (or of the agent) and filters. Creating an index takes no copy of the table.

Migrations are history: this file spells its names out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``runs (suite, agent, started_at)``."""
    op.create_index("ix_runs_suite_agent_started_at", "runs", ["suite", "agent", "started_at"])


def downgrade() -> None:
    """Drop ``runs (suite, agent, started_at)``."""
    op.drop_index("ix_runs_suite_agent_started_at", table_name="runs")
