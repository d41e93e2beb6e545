"""Migrations: a fresh database gets the schema on open; reopening changes nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from seatrial.case import Case
from seatrial.errors import StoreError
from seatrial.record import RunInfo
from seatrial.store import SCHEMA_REVISION, Store
from seatrial.store._migrate import current_revision, head_revision
from seatrial.store._schema import VERSION_TABLE, metadata

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
    VERSION_TABLE,
}


def test_opening_a_fresh_database_creates_every_table_at_the_newest_revision(
    fresh_url: str,
) -> None:
    with Store.open(fresh_url) as store, store.engine.connect() as connection:
        assert set(inspect(connection).get_table_names()) == TABLES
        assert current_revision(connection) == head_revision() == SCHEMA_REVISION
        indexes = {ix["name"] for ix in inspect(connection).get_indexes("attempts")}
        assert {"ix_attempts_run_id_verdict", "ix_attempts_failure_type_run_id"} <= indexes


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
