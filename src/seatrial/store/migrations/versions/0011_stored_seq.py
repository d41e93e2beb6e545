"""The order attempts were stored in, so a coordinator reads only what is new.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

A coordinator following a distributed run polled every stored attempt of the run twice a
second (O(n) per poll, 5 ms of its CPU per attempt). ``attempts.stored_seq`` numbers each
row as it is inserted: on PostgreSQL from a sequence (the column's default, so ``COPY`` and
``INSERT`` fill it without naming it); SQLite numbers rows itself (``rowid``), so the column
stays empty there and readers use ``rowid``. Rows stored before this revision keep NULL:
numbering millions of old attempts would rewrite the table, and only running runs are polled.

Migrations are history: this file spells its names out rather than importing the current
schema module, so a later change there cannot rewrite what this revision created.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``attempts.stored_seq`` (a sequence's default on PostgreSQL) and its index."""
    op.add_column("attempts", sa.Column("stored_seq", sa.BigInteger(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE SEQUENCE attempts_stored_seq OWNED BY attempts.stored_seq")
        op.execute(
            "ALTER TABLE attempts ALTER COLUMN stored_seq "
            "SET DEFAULT nextval('attempts_stored_seq')"
        )
    op.create_index("ix_attempts_run_id_stored_seq", "attempts", ["run_id", "stored_seq"])


def downgrade() -> None:
    """Drop ``attempts.stored_seq``, its index and its sequence."""
    op.drop_index("ix_attempts_run_id_stored_seq", table_name="attempts")
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("stored_seq")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP SEQUENCE IF EXISTS attempts_stored_seq")
