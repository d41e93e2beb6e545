"""The store's named queries for the leaderboard and coverage boards, against SQLite and
PostgreSQL alike."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from seatrial.record import AttemptRecord, RunInfo, RunSettings
from seatrial.store import (
    AgentRun,
    SkillUse,
    Store,
    ToolCounts,
    ToolUse,
    newest_run_of_suite,
    newest_run_per_agent,
    newest_suite,
    skill_uses,
    suite_names,
    suite_of_run,
    tool_call_counts,
    tool_uses,
)
from seatrial.trace import Span, SpanEvent, Trace
from seatrial.trace import attrs as A

MakeRun = Callable[..., RunInfo]
MakeAttempt = Callable[..., AttemptRecord]
_span_ids = itertools.count(1)


def span(name: str, status: str = "ok", **fields: Any) -> Span:
    return Span(
        trace_id="t" * 32,
        span_id=f"s{next(_span_ids)}",
        parent_span_id="root",
        name=name,
        start_time_unix_nano=1_000,
        end_time_unix_nano=2_000,
        status=status,
        **fields,
    )


def traced(record: AttemptRecord, *spans: Span) -> AttemptRecord:
    """``record`` with a trace of an agent span and ``spans`` under it."""
    root = Span(
        trace_id="t" * 32,
        span_id="root",
        name="invoke_agent airline",
        start_time_unix_nano=0,
        end_time_unix_nano=10_000,
    )
    return record.model_copy(update={"trace": Trace(trace_id="t" * 32, spans=[root, *spans])})


def test_suites_and_the_newest_suite_and_a_runs_suite(store: Store, make_run: MakeRun) -> None:
    assert suite_names(store) == [] and newest_suite(store) is None
    store.create_run(make_run("r1", suite="retail", started_at=10.0), [])
    store.create_run(make_run("r2", suite="airline", started_at=20.0), [])
    store.create_run(make_run("r3", suite="retail", started_at=5.0), [])
    assert suite_names(store) == ["airline", "retail"]
    assert newest_suite(store) == "airline"
    assert suite_of_run(store, "r3") == "retail"
    assert suite_of_run(store, "missing") is None


def test_newest_run_per_agent_takes_each_agents_newest_finished_run_of_the_suite(
    store: Store, make_run: MakeRun
) -> None:
    finished: dict[str, Any] = {"status": "finished", "suite": "airline"}
    for run in [
        make_run("v1-old", agent="v1", started_at=10.0, **finished),
        make_run("v1-new", agent="v1", started_at=20.0, settings={"repeats": 2}, **finished),
        make_run("v1-running", agent="v1", started_at=30.0, suite="airline"),
        make_run("v1-replay", agent="v1", started_at=40.0, tags=["replay"], **finished),
        make_run("v1-retail", agent="v1", started_at=50.0, status="finished", suite="retail"),
        make_run("v2-b", agent="v2", started_at=15.0, **finished),
        make_run("v2-a", agent="v2", started_at=15.0, **finished),
    ]:
        store.create_run(run, [])
    picked = newest_run_per_agent(store, "airline", skip_tag="replay")
    assert picked == [
        AgentRun("v1-new", "v1", 20.0, RunSettings(repeats=2)),
        AgentRun("v2-a", "v2", 15.0, RunSettings(repeats=3, concurrency=8)),  # a tie: smaller id
    ]
    # Without a tag to skip, the replay run is the newest finished one.
    assert [r.run_id for r in newest_run_per_agent(store, "airline")] == ["v1-replay", "v2-a"]
    assert newest_run_per_agent(store, "absent") == []


def test_newest_run_of_a_suite_prefers_a_finished_one(store: Store, make_run: MakeRun) -> None:
    assert newest_run_of_suite(store, "airline") is None
    store.create_run(make_run("running", suite="airline", started_at=30.0), [])
    assert newest_run_of_suite(store, "airline") == "running"  # none finished: any status
    store.create_run(make_run("done", suite="airline", status="finished", started_at=20.0), [])
    store.create_run(
        make_run("replay", suite="airline", status="finished", tags=["replay"], started_at=25.0),
        [],
    )
    assert newest_run_of_suite(store, "airline", skip_tag="replay") == "done"
    assert newest_run_of_suite(store, "airline") == "replay"


def test_tool_calls_are_execute_tool_spans_counted_per_run_with_their_errors(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    store.create_run(make_run("run"), [])
    store.create_run(make_run("quiet"), [])
    store.save_attempts(
        [
            traced(
                make_attempt("run", "refund", 1, verdict="PASS", failure_type=None),
                span("execute_tool refund"),
                span("execute_tool refund", "error"),
                span("execute_tool lookup", "error"),
                span("chat gpt-4o", "error"),  # a model call, not a tool call
                span("execute_toolbox"),  # the prefix is "execute_tool " with its space
            ),
            traced(make_attempt("run", "refund", 2), span("execute_tool refund")),
            traced(make_attempt("run", "status", 1), span("execute_tool lookup")),
            traced(make_attempt("quiet", "refund", 1), span("chat gpt-4o")),
        ]
    )
    assert tool_call_counts(store, ["run", "quiet"]) == {"run": ToolCounts(calls=5, errors=2)}
    assert tool_call_counts(store, []) == {}
    assert sorted(tool_uses(store, "run")) == [
        ToolUse("lookup", "refund", 1, "PASS", calls=1, errors=1),
        ToolUse("lookup", "status", 1, "FAIL", calls=1, errors=0),
        ToolUse("refund", "refund", 1, "PASS", calls=2, errors=1),
        ToolUse("refund", "refund", 2, "FAIL", calls=1, errors=0),
    ]
    assert tool_uses(store, "quiet") == []


def test_skill_uses_read_skill_attributes_and_events(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    store.create_run(make_run("run"), [])
    routed = SpanEvent(name=A.SKILL, time_unix_nano=1_500, attributes={A.SKILL_NAME: "refunds"})
    plain = SpanEvent(name=A.SKILL, time_unix_nano=1_600, attributes={"name": "billing"})
    store.save_attempts(
        [
            traced(
                make_attempt("run", "refund", 1, verdict="PASS", failure_type=None),
                span("invoke_agent refunds", attributes={A.SKILL_NAME: "refunds"}),
                span("chat gpt-4o", events=[routed, plain]),
            ),
            traced(
                make_attempt("run", "status", 1),
                # Mentions the skill namespace, but is no routing.
                span("chat gpt-4o", attributes={"note": "seatrial.skill.name is unset"}),
                span("execute_tool lookup"),
            ),
        ]
    )
    assert sorted(skill_uses(store, "run")) == [
        SkillUse("billing", "refund", 1, "PASS"),
        SkillUse("refunds", "refund", 1, "PASS"),
        SkillUse("refunds", "refund", 1, "PASS"),
    ]
