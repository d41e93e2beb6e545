"""Snapshots: every attempt stores what it ran with; every run, its agent and gateway."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from alembic import command
from sqlalchemy import MetaData, Table, create_engine, insert

from seatrial._version import __version__
from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.record import AttemptRecord, CassetteKey, RunInfo, RunSnapshot
from seatrial.run import RunOptions, fixture_hash, run_suite_async
from seatrial.store import SCHEMA_REVISION, Store
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS, attempt_rows, run_row
from seatrial.store._migrate import alembic_config, current_revision
from seatrial.store._schema import VERSION_TABLE
from seatrial.testing import AgentServer, FakeOpenAI
from seatrial.trace import Span, Trace
from tests.conftest import bundled_data
from tests.run import replay_agent
from tests.run.replay_project import KEY_ENV, PINNED, order_model, record_run, write_project

REQUEST_HASH = "seatrial.gateway.request_hash"
OUTPUT_MESSAGES = "gen_ai.output.messages"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-replay")


def sha16(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:16]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


async def recorded(tmp_path: Path, store: Store) -> tuple[str, AttemptRecord]:
    async with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        run_id = await record_run(tmp_path, store)
    [record] = store.attempts(run_id, with_traces=True)
    return run_id, record


async def test_an_attempt_through_the_gateway_snapshots_its_case_models_and_agent(
    tmp_path: Path, store: Store
) -> None:
    run_id, record = await recorded(tmp_path, store)
    snapshot = record.snapshot
    assert record.verdict == "PASS" and snapshot is not None
    [case] = store.run_cases(run_id)
    assert snapshot.case_hash == sha16(canonical(case.model_dump(mode="json")))
    assert snapshot.fixture_hash is None  # the case has no fixture
    assert (snapshot.models_requested, snapshot.models_answered) == (["main"], [PINNED])
    assert snapshot.agent == {
        "agent_version": "1",
        "prompt_hash": sha16(replay_agent.PROMPT),
        "tool_schema_hash": sha16(canonical(replay_agent.TOOLS)),
        "model": "main",
    }
    assert snapshot.cassette == CassetteKey(
        run_id=run_id, case_id="where-is-my-order", attempt=1, calls=2
    )
    cassette = tmp_path / ".seatrial" / "cassettes" / f"{run_id}.jsonl"
    assert len(cassette.read_text(encoding="utf-8").splitlines()) == 2


async def test_a_run_snapshots_seatrial_python_the_agent_file_and_the_gateway(
    tmp_path: Path, store: Store
) -> None:
    run_id, _ = await recorded(tmp_path, store)
    snapshot = RunSnapshot.model_validate(store.get_run(run_id).settings.snapshot)
    assert snapshot.seatrial_version == __version__
    assert snapshot.python_version == platform.python_version()
    agent_file = (tmp_path / "agent.py").resolve()
    assert snapshot.agent.file == str(agent_file)
    assert snapshot.agent.code_hash == sha16(agent_file.read_bytes())
    assert snapshot.agent.kind == "python"
    gateway = snapshot.gateway
    assert gateway is not None
    assert gateway.models == {"main": PINNED}
    assert gateway.cassette_mode == "record"
    assert gateway.cassette_path == str((tmp_path / ".seatrial" / "cassettes").resolve())


async def test_chat_spans_carry_the_request_hash_and_the_answer_as_otel_output_messages(
    tmp_path: Path, store: Store
) -> None:
    _, record = await recorded(tmp_path, store)
    assert record.trace is not None
    first, second = (call.span for call in record.trace.model_calls())
    hashes = [span.attributes[REQUEST_HASH] for span in (first, second)]
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in hashes)
    assert hashes[0] != hashes[1]  # the second request carries the tool's result
    schema = json.loads(
        (bundled_data("otel-semconv-genai") / "schemas" / "gen-ai-output-messages.json").read_text()
    )
    asked = json.loads(first.attributes[OUTPUT_MESSAGES])
    answered = json.loads(second.attributes[OUTPUT_MESSAGES])
    for messages in (asked, answered):
        jsonschema.validate(messages, schema)
    [call] = asked[0]["parts"]
    assert (call["type"], call["name"], call["arguments"]) == (
        "tool_call",
        "order_status",
        {"order_id": "A1"},
    )
    assert asked[0]["finish_reason"] == "tool_call"
    assert answered[0]["parts"] == [{"type": "text", "content": "Order A1 is shipped."}]
    assert answered[0]["finish_reason"] == "stop"


def test_the_fixture_hash_follows_the_files_not_the_folder(tmp_path: Path) -> None:
    original = tmp_path / "a"
    (original / "docs").mkdir(parents=True)
    (original / "README.md").write_text("hello\n", encoding="utf-8")
    (original / "docs" / "design.md").write_text("# Design\n", encoding="utf-8")
    copy = tmp_path / "b"
    shutil.copytree(original, copy)
    assert fixture_hash(original) == fixture_hash(copy) is not None
    (copy / "README.md").write_text("hello!\n", encoding="utf-8")
    assert fixture_hash(copy) != fixture_hash(original)
    shutil.rmtree(copy)
    shutil.copytree(original, copy)
    (copy / "docs" / "design.md").rename(copy / "docs" / "plan.md")
    assert fixture_hash(copy) != fixture_hash(original)
    assert fixture_hash(None) is None


def _run(suite: Path, spec: str, store: Store) -> str:
    import asyncio

    async def go() -> str:
        adapter = resolve_agent(spec)
        try:
            outcome = await run_suite_async(load_suite(suite), adapter, store, RunOptions())
        finally:
            await adapter.aclose()
        return outcome.run_id

    return asyncio.run(go())


FIXTURE_SUITE = """
suite: fixtures
cases:
  - id: one
    input: hi
    fixture: files
    repeats: 2
"""


def test_attempts_of_a_case_share_its_fixture_hash_and_a_python_agent_describes_itself(
    tmp_path: Path, store: Store
) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(FIXTURE_SUITE, encoding="utf-8")
    (tmp_path / "agent.py").write_text(
        "def agent(message, session):\n"
        "    session.describe(version=3, prompt=[{'role': 'system', 'content': 'x'}],"
        " team='orders', notes=None)\n"
        "    raise RuntimeError('the model is down')\n",
        encoding="utf-8",
    )
    run_id = _run(tmp_path / "suite.yaml", f"python:{tmp_path / 'agent.py'}:agent", store)
    records = store.attempts(run_id)
    assert [r.verdict for r in records] == ["ERROR", "ERROR"]
    expected = fixture_hash(tmp_path / "files")
    for record in records:
        assert record.snapshot is not None
        assert record.snapshot.fixture_hash == expected
        # Said before the agent failed: kept. A prompt given as messages is hashed as JSON;
        # None values are left out.
        assert record.snapshot.agent == {
            "agent_version": "3",
            "prompt_hash": sha16(canonical([{"role": "system", "content": "x"}])),
            "team": "orders",
        }
        assert record.snapshot.models_requested == [] and record.snapshot.cassette is None


SIMPLE_SUITE = """
suite: http
cases:
  - id: one
    input: hi
"""


def test_an_http_agents_protocol_metadata_is_stored_scalars_only(
    tmp_path: Path, store: Store
) -> None:
    (tmp_path / "suite.yaml").write_text(SIMPLE_SUITE, encoding="utf-8")
    metadata = {
        "agent_version": "2025.11.3",
        "prompt_hash": "b1946ac92492d234",
        "tool_schema_hash": "591785b794601e21",
        "model": "gpt-4o-2024-08-06",
        "tools": ["order_status"],  # not a scalar: left out
    }
    with AgentServer(lambda request: {"response": "hello", "metadata": metadata}) as server:
        run_id = _run(tmp_path / "suite.yaml", server.url, store)
    [record] = store.attempts(run_id)
    assert record.snapshot is not None
    assert record.snapshot.agent == {k: v for k, v in metadata.items() if k != "tools"}


def test_an_http_agent_whose_metadata_is_not_an_object_errors_saying_so(
    tmp_path: Path, store: Store
) -> None:
    (tmp_path / "suite.yaml").write_text(SIMPLE_SUITE, encoding="utf-8")
    with AgentServer(lambda request: {"response": "hello", "metadata": "v2"}) as server:
        run_id = _run(tmp_path / "suite.yaml", server.url, store)
    [record] = store.attempts(run_id)
    assert record.verdict == "ERROR"
    assert "`metadata` that is not an object" in (record.error or "")


def _database_at_0003(path: Path) -> str:
    """A SQLite store migrated to revision 0003 only, holding one run with one attempt."""
    url = f"sqlite:///{path}"
    engine = create_engine(url)
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0003")
        tables = MetaData()
        runs, attempts, spans = (
            Table(name, tables, autoload_with=connection) for name in ("runs", "attempts", "spans")
        )
        info = RunInfo(run_id="old", suite="s", agent="python:a:b", status="finished")
        connection.execute(insert(runs), [run_row(info)])
        trace = Trace(
            trace_id="t1",
            spans=[
                Span(trace_id="t1", span_id="s1", name="invoke_agent a", start_time_unix_nano=1)
            ],
        )
        record = AttemptRecord(run_id="old", case_id="c", attempt=1, verdict="PASS", trace=trace)
        [attempt_row], span_rows = attempt_rows([record])
        row = dict(zip(ATTEMPT_COLUMNS, attempt_row, strict=True))
        assert "snapshot" not in attempts.c  # the column is 0004's
        del row["snapshot"]
        for key in ("responses", "assertions"):
            row[key] = json.loads(str(row[key]))
        connection.execute(insert(attempts), [row])
        for span_row in span_rows:
            span = dict(zip(SPAN_COLUMNS, span_row, strict=True))
            span["attributes"], span["events"] = {}, []
            connection.execute(insert(spans), [span])
    engine.dispose()
    return url


def test_a_0003_store_upgrades_and_its_old_attempts_read_without_a_snapshot(
    tmp_path: Path,
) -> None:
    url = _database_at_0003(tmp_path / "old.db")
    with Store.open(url) as store:
        with store.engine.connect() as connection:
            assert current_revision(connection) == SCHEMA_REVISION
            version = connection.exec_driver_sql(f"SELECT version_num FROM {VERSION_TABLE}")
            assert version.scalar() == SCHEMA_REVISION
        [old] = store.attempts("old", with_traces=True)
        assert old.snapshot is None and old.verdict == "PASS"
        assert old.trace is not None and old.trace.spans[0].span_id == "s1"
        snapshot = {"case_hash": "0123456789abcdef", "models_answered": [PINNED]}
        store.save_attempts(
            [AttemptRecord(run_id="old", case_id="c", attempt=2, verdict="PASS", snapshot=snapshot)]
        )
        new = store.attempts("old", case_id="c")[1]
        assert new.snapshot is not None and new.snapshot.models_answered == [PINNED]
