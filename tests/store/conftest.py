"""Fixtures for the store tests: every test runs against SQLite and against PostgreSQL.

PostgreSQL is the server on 127.0.0.1:5432 (trust auth, database ``test``). The session
creates a schema of its own, migrates it once, empties its tables before each test, and
drops it at the end; the test is skipped, saying why, when no server answers.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from seatrial.case import AssertionSpec, Case, Limits
from seatrial.record import AssertionResult, AttemptRecord, Metrics, RunInfo
from seatrial.store import Store
from seatrial.trace import Span, SpanEvent, Trace, attrs
from tests.conftest import bundled_data

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_DATABASE = "test"
TAU_BENCH = "tau-bench/gpt-4o-airline.json"


def pg_url(user: str, schema: str, password: str = "") -> str:
    """A ``postgresql://`` URL whose connections use ``schema``."""
    secret = f":{password}" if password else ""
    return (
        f"postgresql://{user}{secret}@{PG_HOST}:{PG_PORT}/{PG_DATABASE}"
        f"?options=-csearch_path%3D{schema}"
    )


@pytest.fixture(scope="session")
def pg_user() -> str:
    """A user the local PostgreSQL server lets in; skips when none answers."""
    problems = []
    for user in ("postgres", "root"):
        try:
            with psycopg.connect(
                host=PG_HOST, port=PG_PORT, user=user, dbname=PG_DATABASE, connect_timeout=3
            ):
                return user
        except psycopg.Error as exc:
            problems.append(" ".join(str(exc).split()))
    pytest.skip(f"PostgreSQL not reachable at {PG_HOST}:{PG_PORT}: {'; '.join(problems)}")


@pytest.fixture(scope="session")
def pg_schemas(pg_user: str) -> Iterator[Callable[[], str]]:
    """Make fresh schemas (unique names, so parallel sessions never meet); drop them at the end."""
    made: list[str] = []

    def make() -> str:
        name = f"seatrial_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user=pg_user, dbname=PG_DATABASE, autocommit=True
        ) as connection:
            connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        made.append(name)
        return name

    yield make
    with psycopg.connect(
        host=PG_HOST, port=PG_PORT, user=pg_user, dbname=PG_DATABASE, autocommit=True
    ) as connection:
        for name in made:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def pg_session_url(pg_user: str, pg_schemas: Callable[[], str]) -> str:
    """The session's PostgreSQL store, migrated once."""
    url = pg_url(pg_user, pg_schemas())
    Store.open(url).close()
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    """The database the test runs against."""
    return str(request.param)


@pytest.fixture
def fresh_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a database Seatrial has never touched."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'fresh' / 'seatrial.db'}"
    user = request.getfixturevalue("pg_user")
    return pg_url(user, request.getfixturevalue("pg_schemas")())


@pytest.fixture
def db_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of an empty, migrated store."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'seatrial.db'}"
    url = str(request.getfixturevalue("pg_session_url"))
    with Store.open(url) as store, store.engine.begin() as connection:
        connection.exec_driver_sql("TRUNCATE runs CASCADE")
    return url


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open, empty store."""
    with Store.open(db_url) as opened:
        yield opened


@pytest.fixture(scope="session")
def tau_record() -> dict[str, Any]:
    """One real tau-bench trajectory (GPT-4o, airline) with tool calls."""
    records = json.loads(bundled_data(TAU_BENCH).read_text(encoding="utf-8"))
    return next(r for r in records if sum(1 for m in r["traj"] if m.get("tool_calls")) >= 3)


def trace_of_trajectory(trajectory: list[dict[str, Any]], start: int) -> Trace:
    """An OTel GenAI trace of a tau-bench trajectory: chat spans and execute_tool spans."""
    trace_id = uuid.uuid4().hex
    root = Span(
        trace_id=trace_id,
        span_id="a0",
        name="invoke_agent airline",
        start_time_unix_nano=start,
        attributes={attrs.OPERATION: attrs.OP_INVOKE_AGENT, attrs.AGENT_NAME: "airline"},
        status="ok",
    )
    spans = [root]
    results = {m["tool_call_id"]: m["content"] for m in trajectory if m["role"] == "tool"}
    clock = start
    for index, message in enumerate(trajectory):
        if message["role"] != "assistant":
            continue
        clock += 1_000_000
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=f"c{index}",
                parent_span_id="a0",
                name="chat gpt-4o",
                start_time_unix_nano=clock,
                end_time_unix_nano=clock + 700_000,
                attributes={
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "gpt-4o",
                    attrs.INPUT_TOKENS: 900 + index,
                    attrs.OUTPUT_TOKENS: 40 + index,
                    attrs.COST_USD: 0.0025,
                },
                status="ok",
            )
        )
        for call in message.get("tool_calls") or []:
            clock += 1_000_000
            name = call["function"]["name"]
            spans.append(
                Span(
                    trace_id=trace_id,
                    span_id=f"t{len(spans)}",
                    parent_span_id="a0",
                    name=f"execute_tool {name}",
                    start_time_unix_nano=clock,
                    end_time_unix_nano=clock + 300_000,
                    attributes={
                        attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                        attrs.TOOL_NAME: name,
                        attrs.TOOL_CALL_ID: call["id"],
                        attrs.TOOL_ARGUMENTS: call["function"]["arguments"],
                        attrs.TOOL_RESULT: results.get(call["id"], ""),
                    },
                    events=[
                        SpanEvent(
                            name=attrs.PERMISSION,
                            time_unix_nano=clock + 10,
                            attributes={
                                attrs.PERMISSION_TOOL: name,
                                attrs.PERMISSION_SCOPE: "once",
                                attrs.PERMISSION_DECISION: "granted",
                            },
                        )
                    ],
                    status="ok",
                )
            )
    root.end_time_unix_nano = clock + 2_000_000
    return Trace(trace_id=trace_id, spans=spans)


@pytest.fixture
def make_attempt(tau_record: dict[str, Any]) -> Callable[..., AttemptRecord]:
    """Build a full attempt of a run: a real trajectory's trace, metrics, assertions."""

    def make(
        run_id: str, case_id: str = "book-flight", attempt: int = 1, **changes: Any
    ) -> AttemptRecord:
        start = 1_763_000_000_000_000_000 + attempt * 10_000_000_000
        trace = trace_of_trajectory(tau_record["traj"], start)
        replies = [
            m["content"]
            for m in tau_record["traj"]
            if m["role"] == "assistant" and m.get("content")
        ]
        record = AttemptRecord(
            run_id=run_id,
            case_id=case_id,
            attempt=attempt,
            verdict="FAIL",
            failure_type="wrong_params",
            reason="book_reservation called with payment_id credit_card_7447 (want certificate)",
            score=0.5,
            metrics=Metrics.of(trace),
            assertions=[
                AssertionResult(
                    id="tool_called",
                    level="L1",
                    type="tool_called",
                    verdict="pass",
                    reason="get_user_details was called",
                ),
                AssertionResult(
                    id="tool_args",
                    level="L1",
                    type="tool_args",
                    verdict="fail",
                    reason="payment_id differs",
                    failure_type="wrong_params",
                ),
                AssertionResult(
                    id="judge",
                    level="L3",
                    type="llm_judge",
                    verdict="not_evaluated",
                    reason="skipped: hard check failed",
                    must_pass=False,
                    weight=2.0,
                    score=None,
                ),
            ],
            response=replies[-1],
            responses=replies,
            final_state={"reservations": [{"id": "HATHAT", "status": "booked"}], "balance": 0.0},
            user_id=f"mia_li_3668-{attempt:04x}",
            session_id=f"sess-{run_id}-{attempt}",
            started_at=start / 1e9,
            finished_at=start / 1e9 + 2.5,
            trace=trace,
        )
        return record.model_copy(update=changes)

    return make


@pytest.fixture
def cases() -> list[Case]:
    """Three cases as a suite would hold them, one multi-turn with assertions and limits."""
    return [
        Case(
            id="book-flight",
            name="预约航班",
            category="预约",
            priority="P0",
            input="帮我订 5 月 20 日纽约到西雅图的航班",
            assertions=[
                AssertionSpec.model_validate({"type": "tool_called", "tool": "book_reservation"}),
                AssertionSpec.model_validate(
                    {"type": "llm_judge", "rubric": "礼貌且准确", "weight": 2}
                ),
            ],
            limits=Limits(tool_calls=10, wall_time_ms=60_000),
        ),
        Case.model_validate(
            {
                "id": "cancel",
                "category": "取消",
                "turns": ["取消我的预订", "是的，确认取消"],
                "metadata": {"incident": "INC-1042"},
            }
        ),
        Case(id="baggage", category="行李", priority="P2", input="我能带几件行李？"),
    ]


@pytest.fixture
def make_run() -> Callable[..., RunInfo]:
    """Build a run header."""

    def make(run_id: str | None = None, **fields: Any) -> RunInfo:
        values: dict[str, Any] = {
            "run_id": run_id or uuid.uuid4().hex,
            "suite": "airline",
            "agent": "http://agent",
            "started_at": 1_763_000_000.0,
            "settings": {"repeats": 3, "concurrency": 8},
            "seatrial_version": "0.1.0",
        }
        values.update(fields)
        return RunInfo(**values)

    return make
