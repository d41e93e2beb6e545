"""The store's named queries behind ``/metrics``, against SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seatrial.case import Case
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.store import (
    AttemptGroup,
    LatestRun,
    RunCount,
    Store,
    attempt_groups,
    latest_runs,
    run_counts,
)

MakeRun = Callable[..., RunInfo]


def attempt(run_id: str, case_id: str, number: int, verdict: str, **metrics: Any) -> AttemptRecord:
    failure = metrics.pop("failure_type", None)
    return AttemptRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=number,
        verdict=verdict,
        failure_type=failure,
        metrics=Metrics(**metrics),
    )


def test_latest_runs_take_each_suite_and_agents_newest_finished_run(
    store: Store, make_run: MakeRun
) -> None:
    done: dict[str, Any] = {"status": "finished"}
    for run in [
        make_run("a-old", agent="a", started_at=10.0, **done),
        make_run("a-new", agent="a", started_at=20.0, finished_at=25.0, **done),
        make_run("a-running", agent="a", started_at=30.0),
        make_run("a-stopped", agent="a", started_at=31.0, status="interrupted"),
        make_run("a-replay", agent="a", started_at=40.0, tags=["replay"], **done),
        make_run("a-retail", agent="a", suite="retail", started_at=5.0, **done),
        # Two runs of b started in the same instant: the smaller id, as the leaderboard.
        make_run("b-2", agent="b", started_at=50.0, **done),
        make_run("b-1", agent="b", started_at=50.0, **done),
    ]:
        store.create_run(run, [])
    assert latest_runs(store, skip_tag="replay") == [
        LatestRun("a-new", "airline", "a", 20.0, 25.0),
        LatestRun("b-1", "airline", "b", 50.0, None),
        LatestRun("a-retail", "retail", "a", 5.0, None),
    ]
    # Without a tag to skip, the replay is the newest.
    assert latest_runs(store)[0].run_id == "a-replay"


def test_attempt_groups_sum_each_run_category_verdict_and_failure_type(
    store: Store, make_run: MakeRun
) -> None:
    store.create_run(
        make_run("r1"),
        [Case(id="c1", input="q", category="订票"), Case(id="c2", input="q", category="faq")],
    )
    store.create_run(make_run("other"), [Case(id="c1", input="q", category="订票")])
    store.save_attempts(
        [
            attempt("r1", "c1", 1, "PASS", wall_time_ms=500, input_tokens=10, output_tokens=1),
            attempt("r1", "c1", 2, "PASS", wall_time_ms=1500, input_tokens=20, cost_usd=0.5),
            attempt("r1", "c1", 3, "FAIL", failure_type="loop", wall_time_ms=999.9),
            attempt("r1", "c2", 1, "FAIL", failure_type="loop", wall_time_ms=3000),
            # A case the run did not list (as an imported run may hold): no category.
            attempt("r1", "unlisted", 1, "ERROR", failure_type="agent_error", wall_time_ms=1),
            attempt("other", "c1", 1, "PASS", wall_time_ms=1),
        ]
    )
    groups = attempt_groups(store, ["r1"], [0.5, 1.0, 2.0])
    assert sorted(groups) == [
        AttemptGroup("r1", "", "ERROR", "agent_error", 1, 0, 0, 0.0, 0.001, (1, 1, 1)),
        AttemptGroup("r1", "faq", "FAIL", "loop", 1, 0, 0, 0.0, 3.0, (0, 0, 0)),
        AttemptGroup("r1", "订票", "FAIL", "loop", 1, 0, 0, 0.0, 0.9999, (0, 1, 1)),
        AttemptGroup("r1", "订票", "PASS", None, 2, 30, 1, 0.5, 2.0, (1, 1, 2)),
    ]
    assert attempt_groups(store, [], [1.0]) == []
    assert attempt_groups(store, ["no-such-run"], [1.0]) == []


def test_run_counts_count_runs_by_suite_agent_and_status_without_the_skipped_tag(
    store: Store, make_run: MakeRun
) -> None:
    for run in [
        make_run(agent="a", status="finished"),
        make_run(agent="a", status="finished"),
        make_run(agent="a", status="interrupted"),
        make_run(agent="a", status="finished", tags=["replay"]),
        make_run(agent="b", suite="retail"),
    ]:
        store.create_run(run, [])
    assert run_counts(store, skip_tag="replay") == [
        RunCount("airline", "a", "finished", 2),
        RunCount("airline", "a", "interrupted", 1),
        RunCount("retail", "b", "running", 1),
    ]
    assert RunCount("airline", "a", "finished", 3) in run_counts(store)
