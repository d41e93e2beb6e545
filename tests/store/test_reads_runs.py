"""The store's named queries over runs (what the runs list and its gates read), against
SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy
import pytest

from seatrial.case import Case
from seatrial.errors import StoreError
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.store import (
    AttemptFigures,
    RunQuery,
    RunTotals,
    Store,
    attempt_figures,
    case_definitions,
    previous_run_id,
    run_heads,
    run_totals,
    runs_by_id,
    runs_matching,
    wall_time_p95,
)

MakeRun = Callable[..., RunInfo]
MakeAttempt = Callable[..., AttemptRecord]


def timed(record: AttemptRecord, wall_time_ms: float, **metrics: float) -> AttemptRecord:
    """``record`` with its wall time (and other metrics) replaced."""
    changed = record.metrics.model_copy(update={"wall_time_ms": wall_time_ms, **metrics})
    return record.model_copy(update={"metrics": changed})


@pytest.fixture
def listed(store: Store, make_run: MakeRun) -> list[RunInfo]:
    """Four runs of two suites and agents, some tagged, oldest first."""
    runs = [
        make_run("r1", suite="airline", agent="v1", tags=["nightly"], started_at=86_400.0),
        make_run("r2", suite="retail", agent="v1", tags=["pr"], started_at=2 * 86_400.0),
        make_run(
            "r3", suite="airline", agent="v2", tags=["nightly", "gpt"], started_at=3 * 86_400.0
        ),
        make_run("r4", suite="airline", agent="v2", status="finished", started_at=4 * 86_400.0),
    ]
    for run in runs:
        store.create_run(run, [])
    return runs


def test_runs_matching_filters_by_suite_agent_tag_and_start_newest_first(
    store: Store, listed: list[RunInfo]
) -> None:
    def ids(**where: object) -> list[str]:
        return [r.run_id for r in runs_matching(store, RunQuery(**where), 10)]  # type: ignore[arg-type]

    assert runs_matching(store, RunQuery(), 10) == listed[::-1]  # headers with their tags
    assert ids(suite="airline") == ["r4", "r3", "r1"]
    assert ids(agent="v1") == ["r2", "r1"]
    assert ids(tag="nightly") == ["r3", "r1"]
    assert ids(suite="airline", agent="v2", tag="gpt") == ["r3"]
    assert ids(tag="absent") == []
    # The start window includes its first instant and excludes its end.
    assert ids(started_from=2 * 86_400.0) == ["r4", "r3", "r2"]
    assert ids(started_before=2 * 86_400.0) == ["r1"]
    assert ids(started_from=2 * 86_400.0, started_before=4 * 86_400.0) == ["r3", "r2"]


def test_runs_matching_pages_with_limit_and_offset(store: Store, listed: list[RunInfo]) -> None:
    pages = [[r.run_id for r in runs_matching(store, RunQuery(), 3, offset)] for offset in (0, 3)]
    assert pages == [["r4", "r3", "r2"], ["r1"]]


def test_runs_with_the_same_start_are_ordered_by_id_descending(
    store: Store, make_run: MakeRun
) -> None:
    for run_id in ("b", "c", "a"):
        store.create_run(make_run(run_id, started_at=5.0), [])
    assert [r.run_id for r in runs_matching(store, RunQuery(), 10)] == ["c", "b", "a"]


def test_run_heads_are_the_newest_matching_runs_with_their_status(
    store: Store, listed: list[RunInfo]
) -> None:
    heads = run_heads(store, RunQuery(suite="airline"), 2)
    assert heads == [("r4", 4 * 86_400.0, "finished"), ("r3", 3 * 86_400.0, "running")]
    assert heads[0].status == "finished"


def test_runs_by_id_reads_the_runs_that_exist(store: Store, listed: list[RunInfo]) -> None:
    found = runs_by_id(store, ["r3", "missing", "r1"])
    assert sorted(found, key=lambda r: r.run_id) == [listed[0], listed[2]]
    assert runs_by_id(store, []) == []


def test_run_totals_sum_attempts_passes_tokens_and_cost_per_run(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run, empty = make_run("full"), make_run("empty")
    store.create_run(run, cases)
    store.create_run(empty, cases)
    records = [
        make_attempt("full", "book-flight", 1, verdict="PASS", failure_type=None),
        make_attempt("full", "book-flight", 2),
        make_attempt("full", "cancel", 1, verdict="WARNING", failure_type=None),
    ]
    store.save_attempts(records)
    totals = run_totals(store, ["full", "empty"])
    metrics: list[Metrics] = [r.metrics for r in records]
    assert totals == {
        "full": RunTotals(
            attempts=3,
            passes=1,
            tokens=sum(m.input_tokens + m.output_tokens for m in metrics),
            cost_usd=pytest.approx(sum(m.cost_usd for m in metrics)),
        )
    }  # a run without attempts is absent, not zero
    assert run_totals(store, []) == {}


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 21, 101])
def test_wall_time_p95_is_numpys_linear_percentile(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, n: int
) -> None:
    store.create_run(make_run("timed"), [])
    store.create_run(make_run("untimed"), [])
    # Distinct, unsorted times so the ranks the database picks matter.
    times = [float((i * 37) % 101) * 10.0 + i / 1000 for i in range(n)]
    store.save_attempts(
        [timed(make_attempt("timed", "c", i + 1), ms) for i, ms in enumerate(times)]
    )
    found = wall_time_p95(store, ["timed", "untimed"])
    assert found.keys() == {"timed"}
    assert found["timed"] == pytest.approx(float(numpy.percentile(times, 95)), rel=1e-12)


def test_attempt_figures_come_by_case_then_attempt_for_every_run_asked(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    store.create_run(make_run("run"), cases)
    store.create_run(make_run("other"), cases)
    records = [
        timed(make_attempt("run", "cancel", 2), 30.0, cost_usd=0.5, tool_calls=4),
        timed(make_attempt("run", "book-flight", 1, verdict="PASS", failure_type=None), 10.0),
        timed(make_attempt("run", "cancel", 1, verdict="ERROR", failure_type="timeout"), 20.0),
        make_attempt("other", "baggage", 1),
    ]
    store.save_attempts(records)
    found = attempt_figures(store, ["run", "absent"])
    assert found.keys() == {"run", "absent"}
    assert found["absent"] == []
    assert [(f.case_id, f.verdict, f.failure_type, f.wall_time_ms) for f in found["run"]] == [
        ("book-flight", "PASS", None, 10.0),
        ("cancel", "ERROR", "timeout", 20.0),
        ("cancel", "FAIL", "wrong_params", 30.0),
    ]
    last, metrics = found["run"][-1], records[0].metrics
    assert last == AttemptFigures(
        run_id="run",
        case_id="cancel",
        verdict="FAIL",
        failure_type="wrong_params",
        wall_time_ms=30.0,
        tokens=metrics.input_tokens + metrics.output_tokens,
        cost_usd=0.5,
        tool_calls=4,
    )


def test_case_definitions_come_as_stored_in_suite_order(
    store: Store, make_run: MakeRun, cases: list[Case]
) -> None:
    store.create_run(make_run("run"), cases)
    store.create_run(make_run("bare"), [])
    found = case_definitions(store, ["run", "bare"])
    assert [d["id"] for d in found["run"]] == ["book-flight", "cancel", "baggage"]
    assert found["run"][0]["name"] == "预约航班" and found["run"][0]["priority"] == "P0"
    assert found["bare"] == []


def test_previous_run_is_the_same_suites_run_started_just_before(
    store: Store, make_run: MakeRun
) -> None:
    runs = {
        "old": make_run("old", suite="airline", started_at=10.0),
        "twin-a": make_run("twin-a", suite="airline", started_at=20.0),
        "other": make_run("other", suite="retail", started_at=25.0),
        "this": make_run("this", suite="airline", started_at=30.0),
        "later": make_run("later", suite="airline", started_at=40.0),
    }
    for run in runs.values():
        store.create_run(run, [])
    assert previous_run_id(store, runs["this"]) == "twin-a"  # not retail's, not a later one
    assert previous_run_id(store, runs["old"]) is None
    # A run started in the same instant counts as before: the greater id wins the tie.
    twin_b = make_run("twin-b", suite="airline", started_at=20.0)
    store.create_run(twin_b, [])
    assert previous_run_id(store, runs["this"]) == "twin-b"
    assert previous_run_id(store, twin_b) == "twin-a"


def test_a_failed_read_is_a_store_error_naming_what_was_read(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        with store.engine.begin() as connection:
            connection.exec_driver_sql("DROP TABLE spans")
            connection.exec_driver_sql("DROP TABLE attempts")
        with pytest.raises(StoreError, match="cannot sum the attempts of runs in the store at"):
            run_totals(store, ["r1"])
