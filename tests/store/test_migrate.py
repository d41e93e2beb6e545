"""Migrations: a fresh database gets the schema on open; reopening changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from seatrial.case import Case
from seatrial.errors import StoreError
from seatrial.record import RunInfo
from seatrial.store import SCHEMA_REVISION, Store
from seatrial.store._engine import make_engine
from seatrial.store._migrate import current_revision, head_revision, migrate
from seatrial.store._schema import VERSION_TABLE, metadata
from seatrial.store._url import resolve_url
from tests.store.conftest import pg_url

TABLES = {
    "runs",
    "run_tags",
    "run_cases",
    "attempts",
    "spans",
    "model_calls",
    "calibrations",
    "review_items",
    "labels",
    "traces",
    "trace_spans",
    "golden_versions",
    "golden_changes",
    "pending_cases",
    "schedule_runs",
    VERSION_TABLE,
}


def test_opening_a_fresh_database_creates_every_table_at_the_newest_revision(
    fresh_url: str,
) -> None:
    with Store.open(fresh_url) as store, store.engine.connect() as connection:
        assert set(inspect(connection).get_table_names()) == TABLES
        assert current_revision(connection) == head_revision() == SCHEMA_REVISION
        indexes = {ix["name"] for ix in inspect(connection).get_indexes("attempts")}
        assert "ix_attempts_run_id_verdict" in indexes
        assert "ix_attempts_failure_type_run_id" not in indexes  # dropped by 0012


def test_migrated_schema_is_what_the_table_definitions_say(fresh_url: str) -> None:
    with Store.open(fresh_url) as store, store.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"version_table": VERSION_TABLE, "compare_type": True}
        )
        assert compare_metadata(context, metadata) == []


def test_reopening_keeps_the_data_and_migrates_nothing(
    fresh_url: str, make_run: Callable[..., RunInfo], cases: list[Case]
) -> None:
    run = make_run()
    with Store.open(fresh_url) as store:
        store.create_run(run, cases)
    with Store.open(fresh_url) as store, store.engine.connect() as connection:
        assert store.get_run(run.run_id) == run
        versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
        assert versions == [(SCHEMA_REVISION,)]


def test_store_written_by_a_newer_seatrial_is_refused(fresh_url: str) -> None:
    Store.open(fresh_url).close()
    with Store.open(fresh_url) as store, store.engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = 'f00d'"))
    with pytest.raises(StoreError, match="newer Seatrial") as raised:
        Store.open(fresh_url)
    assert "'f00d'" in str(raised.value)


@pytest.fixture
def migrated_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A second fresh database, brought to the newest schema by running every migration."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'migrated.db'}"
    else:
        url = pg_url(request.getfixturevalue("pg_user"), request.getfixturevalue("pg_schemas")())
    engine = make_engine(resolve_url(url, None))
    try:
        migrate(engine)
    finally:
        engine.dispose()
    return url


def schema_of(engine: Engine) -> dict[str, Any]:
    """Every table's columns (in order), keys, indexes and constraints, as the database says."""
    inspector = inspect(engine)
    schema: dict[str, Any] = {}
    for table in sorted(inspector.get_table_names()):
        columns = [
            (c["name"], str(c["type"]), c["nullable"], c.get("default"))
            for c in inspector.get_columns(table)
        ]
        keys = inspector.get_pk_constraint(table)
        foreign = sorted(
            (f["name"] or "", f["constrained_columns"], f["referred_table"], f["referred_columns"])
            for f in inspector.get_foreign_keys(table)
        )
        indexes = sorted(
            (i["name"] or "", i["column_names"], bool(i["unique"]))
            for i in inspector.get_indexes(table)
        )
        uniques = sorted(
            (u["name"] or "", u["column_names"]) for u in inspector.get_unique_constraints(table)
        )
        schema[table] = (columns, keys, foreign, indexes, uniques)
    return schema


def test_a_fresh_store_gets_the_schema_the_migrations_build(
    fresh_url: str, migrated_url: str
) -> None:
    with Store.open(fresh_url) as created, Store.open(migrated_url) as migrated:
        assert schema_of(created.engine) == schema_of(migrated.engine)
        with created.engine.connect() as connection:
            assert current_revision(connection) == SCHEMA_REVISION


def test_opening_a_store_of_an_older_revision_migrates_it(fresh_url: str) -> None:
    Store.open(fresh_url).close()
    with Store.open(fresh_url) as store, store.engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '0006'"))
        connection.exec_driver_sql("DROP INDEX ix_runs_suite_agent_started_at")
        connection.exec_driver_sql("DROP TABLE schedule_runs")
        connection.exec_driver_sql("ALTER TABLE golden_changes DROP COLUMN content_hash")
        connection.exec_driver_sql("ALTER TABLE golden_versions DROP COLUMN previous_hash")
        connection.exec_driver_sql("ALTER TABLE golden_versions DROP COLUMN content_hash")
        connection.exec_driver_sql("ALTER TABLE model_calls DROP COLUMN priced")
        connection.exec_driver_sql("ALTER TABLE model_calls DROP COLUMN status")
        connection.exec_driver_sql(
            "CREATE INDEX ix_attempts_failure_type_run_id ON attempts (failure_type, run_id)"
        )
        connection.exec_driver_sql("DROP INDEX ix_attempts_run_id_stored_seq")
        connection.exec_driver_sql("ALTER TABLE attempts DROP COLUMN stored_seq")
        connection.exec_driver_sql("ALTER TABLE attempts DROP COLUMN message")
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql("DROP SEQUENCE IF EXISTS attempts_stored_seq")
    with Store.open(fresh_url) as store, store.engine.connect() as connection:
        assert current_revision(connection) == SCHEMA_REVISION
        indexes = {ix["name"] for ix in inspect(connection).get_indexes("runs")}
        assert "ix_runs_suite_agent_started_at" in indexes
        assert "schedule_runs" in inspect(connection).get_table_names()
        columns = {c["name"] for c in inspect(connection).get_columns("golden_versions")}
        assert {"content_hash", "previous_hash"} <= columns
        ledger = {column["name"] for column in inspect(connection).get_columns("model_calls")}
        assert "status" in ledger
        attempt_indexes = {ix["name"] for ix in inspect(connection).get_indexes("attempts")}
        assert "ix_attempts_run_id_stored_seq" in attempt_indexes
        assert "ix_attempts_failure_type_run_id" not in attempt_indexes
        assert "message" in {c["name"] for c in inspect(connection).get_columns("attempts")}
