"""Connection settings and JSON encoding that every stored record goes through."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from seatrial.record import RunInfo
from seatrial.store import Store
from seatrial.store._engine import (
    SQLITE_BUSY_TIMEOUT_MS,
    SQLITE_PAGE_SIZE,
    SQLITE_WAL_AUTOCHECKPOINT_BYTES,
    dump_json,
    json_text,
    raw_json,
)


def test_sqlite_store_uses_wal_normal_sync_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store, store.engine.connect() as conn:

        def pragma(name: str) -> object:
            return conn.exec_driver_sql(f"PRAGMA {name}").scalar()

        assert pragma("journal_mode") == "wal"
        assert pragma("synchronous") == 1  # NORMAL
        assert pragma("busy_timeout") == SQLITE_BUSY_TIMEOUT_MS
        assert pragma("foreign_keys") == 1
        assert pragma("page_size") == SQLITE_PAGE_SIZE
        assert pragma("wal_autocheckpoint") == SQLITE_WAL_AUTOCHECKPOINT_BYTES // SQLITE_PAGE_SIZE


def test_a_sqlite_store_made_with_another_page_size_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    made = sqlite3.connect(path)
    made.execute("PRAGMA page_size = 4096")
    made.execute("PRAGMA journal_mode = WAL")
    made.close()
    with Store.open(f"sqlite:///{path}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA page_size").scalar() == 4096
        # The WAL still holds the same bytes before a checkpoint.
        checkpoint = conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()
        assert checkpoint == SQLITE_WAL_AUTOCHECKPOINT_BYTES // 4096
        store.create_run(RunInfo(run_id="r", suite="s", agent="a"), [])
        assert store.get_run("r").run_id == "r"


def test_sqlite_file_is_readable_by_plain_sqlite3(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store.open(f"sqlite:///{path}").close()
    connection = sqlite3.connect(path)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    finally:
        connection.close()
    assert {"runs", "attempts", "spans"} <= tables


def test_json_columns_hold_compact_utf8_json() -> None:
    text = dump_json({"reply": "已为您预约", "n": [1, 2.5]})
    assert text == '{"reply":"已为您预约","n":[1,2.5]}'


def test_json_without_a_number_for_nan_or_infinity_gets_null() -> None:
    assert json.loads(dump_json({"score": float("nan"), "cost": float("inf")})) == {
        "score": None,
        "cost": None,
    }


def test_nul_in_json_becomes_a_replacement_character_but_escaped_backslashes_stay() -> None:
    text = raw_json({"a": "x\x00y", "b": "C:\\u0000folder"})
    assert "\\u0000" not in text.replace("\\\\u0000", "")
    assert json.loads(text) == {"a": "x\ufffdy", "b": "C:\\u0000folder"}


def test_serialised_json_is_stored_as_given() -> None:
    already = raw_json([{"id": "tool_called"}])
    assert dump_json(already) == '[{"id":"tool_called"}]'
    assert type(dump_json(already)) is str


@pytest.mark.parametrize(
    "value",
    [
        {"reply": "已为您预约", "n": [1, 2.5]},
        {"score": float("nan"), "cost": float("-inf")},
        {"a": "x\x00y", "b": "C:\\u0000folder"},
        [],
        {},
    ],
)
def test_json_text_is_raw_jsons_text_as_a_plain_str(value: object) -> None:
    text = json_text(value)
    assert type(text) is str
    assert text == raw_json(value)


def test_sqlite_binds_serialised_json_as_text_and_none_as_null(tmp_path: Path) -> None:
    # The store registers sqlite3 adapters for both (they skip a costly lookup per value).
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store, store.engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE bound (j TEXT, n TEXT)")
        conn.exec_driver_sql("INSERT INTO bound VALUES (?, ?)", (raw_json({"a": [1]}), None))
        row = conn.exec_driver_sql("SELECT j, typeof(j), n IS NULL FROM bound").one()
    assert tuple(row) == ('{"a":[1]}', "text", 1)
    assert type(row[0]) is str
