"""Attempts lose the ``(failure_type, run_id)`` index: no query reads it.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07

Every read of attempts by failure type also names the run (``run_id = ?`` or ``IN``), which
``(run_id, verdict)`` and ``(run_id, case_id, attempt)`` serve; no statement the store's,
dashboard's, report's or coordinator's tests send was planned on this index, on SQLite or
PostgreSQL. Every attempt stored still paid for it: 3.5% of the runner's writer thread's
instructions on SQLite (callgrind, benchmarks/runner_overhead.py's attempts).

Migrations are history: this file spells its names out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Drop ``attempts (failure_type, run_id)``."""
    op.drop_index("ix_attempts_failure_type_run_id", table_name="attempts")


def downgrade() -> None:
    """Create ``attempts (failure_type, run_id)`` again."""
    op.create_index("ix_attempts_failure_type_run_id", "attempts", ["failure_type", "run_id"])
