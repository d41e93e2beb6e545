"""The store's tables (SQLAlchemy Core). Alembic's migrations create them; keep both in step.

Spans are stored flat, one row per span with its parent's id, as OTLP carries them; the tree
is rebuilt when read. Keys are made by Seatrial (``attempts.id`` is a random hex id), so a
batch of attempts and their spans goes in as two ``executemany`` inserts with no round-trip
for generated keys.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    FetchedValue,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

SCHEMA_REVISION = "0013"
"""The Alembic revision these tables correspond to (the newest migration)."""

VERSION_TABLE = "seatrial_schema_version"
"""Alembic's version table, named so it cannot clash with another application's."""


class JSONDocument(TypeDecorator[Any]):
    """JSON everywhere, JSONB on PostgreSQL (indexable, compact); None is SQL NULL.

    PostgreSQL's type is chosen when a PostgreSQL engine first uses the column, so opening a
    SQLite store (``seatrial runs``) does not load SQLAlchemy's PostgreSQL dialect and its
    drivers' modules.
    """

    impl = JSON
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(none_as_null=True)

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB(none_as_null=True))
        return dialect.type_descriptor(JSON(none_as_null=True))


def json_type() -> TypeEngine[Any]:
    """The type of a column holding a JSON document (:class:`JSONDocument`)."""
    return JSONDocument()


metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", Text, primary_key=True),
    Column("suite", Text, nullable=False),
    Column("suite_path", Text, nullable=False),
    Column("agent", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("settings", json_type(), nullable=False),
    Column("seatrial_version", Text, nullable=False),
    Column("format_version", Integer, nullable=False),
    Index(None, "started_at"),
    Index(None, "suite", "started_at"),
    Index(None, "agent", "started_at"),
    # The runs of one suite and agent, newest first: flaky cases, drift, baselines (0007).
    Index(None, "suite", "agent", "started_at"),
)

run_tags = Table(
    "run_tags",
    metadata,
    Column("run_id", Text, ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("tag", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "position"),
    Index(None, "tag"),
)

run_cases = Table(
    "run_cases",
    metadata,
    Column("run_id", Text, ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("case_id", Text, nullable=False),
    Column("position", Integer, nullable=False),
    Column("category", Text, nullable=False),
    Column("priority", String(8), nullable=False),
    Column("definition", json_type(), nullable=False),
    PrimaryKeyConstraint("run_id", "case_id"),
    UniqueConstraint("run_id", "position"),
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("run_id", Text, ForeignKey("runs.run_id", ondelete="CASCADE"), nullable=False),
    Column("case_id", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("failure_type", Text),
    Column("reason", Text, nullable=False),
    Column("score", Float),
    Column("tool_calls", Integer, nullable=False),
    Column("model_calls", Integer, nullable=False),
    Column("wall_time_ms", Float, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cost_usd", Float, nullable=False),
    Column("response", Text, nullable=False),
    Column("responses", json_type(), nullable=False),
    Column("final_state", json_type()),
    Column("error", Text),
    Column("user_id", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float, nullable=False),
    Column("trace_id", Text),
    Column("assertions", json_type(), nullable=False),
    Column("format_version", Integer, nullable=False),
    # What the attempt ran with (AttemptSnapshot); NULL for attempts stored before 0004.
    Column("snapshot", json_type()),
    # The order rows were stored in (a sequence on PostgreSQL; SQLite leaves it NULL and
    # readers use its rowid): a coordinator's poll reads only attempts past the last it saw.
    Column("stored_seq", BigInteger, server_default=FetchedValue()),
    # The reason as a message id and parameters (seatrial.i18n.Message); NULL before 0013.
    Column("message", json_type()),
    # Covers "attempts of a run" and "attempts of a case in a run" too.
    UniqueConstraint("run_id", "case_id", "attempt"),
    Index(None, "run_id", "verdict"),
    Index(None, "run_id", "stored_seq"),
    # No (failure_type, run_id) any more (0012): no query reads attempts by failure type.
    Index(None, "trace_id"),
)

POSTGRES_AFTER_CREATE: dict[str, tuple[str, ...]] = {
    # The sequence numbering attempts as they are stored, as the column's default, so COPY
    # and INSERT fill it without naming it (migration 0011 makes the same in an old store).
    "attempts": (
        "CREATE SEQUENCE attempts_stored_seq OWNED BY attempts.stored_seq",
        "ALTER TABLE attempts ALTER COLUMN stored_seq SET DEFAULT nextval('attempts_stored_seq')",
    ),
}
"""Statements a fresh PostgreSQL store runs after creating a table, by table name."""

spans = Table(
    "spans",
    metadata,
    Column("attempt_id", String(32), ForeignKey("attempts.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("trace_id", Text, nullable=False),
    Column("span_id", Text, nullable=False),
    Column("parent_span_id", Text),
    Column("name", Text, nullable=False),
    Column("start_time_unix_nano", BigInteger, nullable=False),
    Column("end_time_unix_nano", BigInteger),
    Column("attributes", json_type(), nullable=False),
    Column("events", json_type(), nullable=False),
    Column("status", String(8), nullable=False),
    Column("status_message", Text, nullable=False),
    # Imported traces may repeat span ids; the position in start order is always unique.
    PrimaryKeyConstraint("attempt_id", "position"),
)

model_calls = Table(
    "model_calls",
    metadata,
    Column("id", String(32), primary_key=True),
    # No foreign key: the gateway also prices calls made outside a stored run.
    Column("run_id", Text),
    Column("case_id", Text),
    Column("attempt", Integer),
    Column("purpose", String(16), nullable=False),
    Column("model", Text, nullable=False),
    Column("provider_model", Text, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cached_input_tokens", BigInteger, nullable=False),
    Column("cost_usd", Float, nullable=False),
    Column("latency_ms", Float, nullable=False),
    Column("cached", Boolean, nullable=False),
    Column("fallback_used", Boolean, nullable=False),
    Column("fault", Text),
    Column("created_at", Float, nullable=False),
    # Whether the model had a price (0009); NULL for calls booked before.
    Column("priced", Boolean),
    # The call's outcome (0010): ok, timeout or error.
    Column("status", String(16), nullable=False, server_default="ok"),
    # Budgets and reports sum a run's spend, split by purpose.
    Index(None, "run_id", "purpose"),
)

calibrations = Table(
    "calibrations",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("judge_model", Text, nullable=False),
    Column("prompt_hash", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("items", Integer, nullable=False),
    Column("agreement", Float, nullable=False),
    # The whole Calibration record: its report and any field added later.
    Column("record", json_type(), nullable=False),
    # The gate asks for the newest calibration of one (judge model, prompt hash).
    Index(None, "judge_model", "prompt_hash", "created_at"),
)

review_items = Table(
    "review_items",
    metadata,
    Column("id", String(32), primary_key=True),
    # No foreign key: human labels are calibration data and outlive the run that raised them.
    Column("run_id", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("assertion_id", Text, nullable=False),
    Column("why", String(16), nullable=False),
    Column("judge_model", Text, nullable=False),
    Column("judge_verdict", String(16), nullable=False),
    Column("judge_reason", Text, nullable=False),
    Column("confidence", Float),
    Column("input", Text, nullable=False),
    Column("output", Text, nullable=False),
    Column("category", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("status", String(16), nullable=False),
    Column("label", String(8)),
    Column("failure_type", Text),
    Column("note", Text, nullable=False),
    Column("who", Text),
    Column("labelled_at", Float),
    Index(None, "status", "created_at"),
    Index(None, "run_id", "status"),
)

labels = Table(
    "labels",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("source", Text, nullable=False),
    # The review item labelled, when the label came from the queue; one label per item.
    Column("item_id", String(32), unique=True),
    Column("input", Text, nullable=False),
    Column("output", Text, nullable=False),
    Column("label", String(8), nullable=False),
    Column("category", Text, nullable=False),
    Column("failure_type", Text),
    Column("note", Text, nullable=False),
    Column("who", Text, nullable=False),
    Column("labelled_at", Float, nullable=False),
    Index(None, "source", "labelled_at"),
)

# Ingested production traces (0005): masked before they are written, one summary row per
# trace for the browser's filters, the spans flat as in ``spans``.

traces = Table(
    "traces",
    metadata,
    Column("trace_id", Text, primary_key=True),
    Column("source", Text, nullable=False),
    Column("service", Text, nullable=False),
    Column("session_id", Text),
    Column("user_id", Text),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("span_count", Integer, nullable=False),
    Column("error", Boolean, nullable=False),
    Column("tools", json_type(), nullable=False),
    Column("models", json_type(), nullable=False),
    # Tokens of the model-call spans; the agent spans' own usage counts only for a trace
    # without model calls. Both are kept so batches of one trace add up exactly.
    Column("model_calls", Integer, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("agent_input_tokens", BigInteger, nullable=False),
    Column("agent_output_tokens", BigInteger, nullable=False),
    Column("masked", json_type(), nullable=False),
    Column("resource", json_type(), nullable=False),
    Column("checks", json_type(), nullable=False),
    Column("received_at", Float, nullable=False),
    Index(None, "started_at"),
    Index(None, "service", "started_at"),
)

trace_spans = Table(
    "trace_spans",
    metadata,
    Column("trace_id", Text, ForeignKey("traces.trace_id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("span_id", Text, nullable=False),
    Column("parent_span_id", Text),
    Column("name", Text, nullable=False),
    Column("start_time_unix_nano", BigInteger, nullable=False),
    Column("end_time_unix_nano", BigInteger),
    Column("attributes", json_type(), nullable=False),
    Column("events", json_type(), nullable=False),
    Column("status", String(8), nullable=False),
    Column("status_message", Text, nullable=False),
    PrimaryKeyConstraint("trace_id", "position"),
    # A span re-sent by an exporter's retry is recognised by its ids and skipped.
    UniqueConstraint("trace_id", "span_id"),
)

# Golden sets (0006): an append-only log. A version is one row of ``golden_versions``; its
# changes (a case added or edited, a case retired) are rows of ``golden_changes``. Nothing
# here is ever updated or deleted: a set at version N is the changes up to N, replayed; the
# hash columns chain the versions so a row changed behind Seatrial's back is found.

golden_versions = Table(
    "golden_versions",
    metadata,
    Column("dataset", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("who", Text, nullable=False),
    Column("note", Text, nullable=False),
    Column("added", Integer, nullable=False),
    Column("retired", Integer, nullable=False),
    Column("cases", Integer, nullable=False),
    # The hash chain (0009, see _golden_chain): this version's hash, and the one before's.
    # NULL only where a row was altered: every version written or migrated has both.
    Column("content_hash", String(64)),
    Column("previous_hash", String(64)),
    # Two writers appending at once: one gets the version, the other retries with the next.
    PrimaryKeyConstraint("dataset", "version"),
)

golden_changes = Table(
    "golden_changes",
    metadata,
    Column("dataset", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("action", String(8), nullable=False),
    Column("case_id", Text, nullable=False),
    Column("category", Text, nullable=False),
    Column("definition", json_type()),
    Column("reason", Text, nullable=False),
    # The hash of this change's content (0009); its version's hash covers it.
    Column("content_hash", String(64)),
    PrimaryKeyConstraint("dataset", "version", "position"),
    ForeignKeyConstraint(
        ["dataset", "version"], ["golden_versions.dataset", "golden_versions.version"]
    ),
)

pending_cases = Table(
    "pending_cases",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("dataset", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("definition", json_type(), nullable=False),
    Column("origin", String(8), nullable=False),
    Column("kind", Text, nullable=False),
    Column("parent_case_id", Text),
    Column("proposals", json_type(), nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("model", Text),
    Column("decided_by", Text),
    Column("decided_at", Float),
    Column("note", Text, nullable=False),
    Column("version", Integer),
    Index(None, "status", "created_at"),
    Index(None, "dataset", "status"),
)

# Scheduled jobs (0008): one row per due time a server claimed. The key is the lock: two
# servers inserting the same (schedule, due_at) cannot both succeed, so a due time runs once.
schedule_runs = Table(
    "schedule_runs",
    metadata,
    Column("schedule", Text, nullable=False),
    Column("due_at", Float, nullable=False),
    Column("claimed_by", Text, nullable=False),
    Column("claimed_at", Float, nullable=False),
    Column("status", String(16), nullable=False),
    Column("run_ids", json_type(), nullable=False),
    Column("error", Text),
    Column("finished_at", Float),
    PrimaryKeyConstraint("schedule", "due_at"),
)
