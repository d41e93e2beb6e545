"""Comparing runs of the real demo agents: transitions, deltas with intervals, flaky cases."""

from __future__ import annotations

import asyncio

from sqlalchemy import update
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.compare import compare_runs, flaky_cases, load_run, resolve_run_ref, to_markdown
from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import PROJECT, SUITE
from seatrial.record import AttemptRecord, RunInfo
from seatrial.run import RunOptions, run_suite_async
from seatrial.store import Store
from seatrial.store._schema import attempts


def run_demo(store: Store, version: str, repeats: int = 1, tags: list[str] | None = None) -> str:
    async def go() -> str:
        adapter = resolve_agent(f"python:seatrial.demo.agents:{version}", base_dir=PROJECT)
        try:
            options = RunOptions(repeats=repeats, tags=tags or [version], concurrency=8)
            return (await run_suite_async(load_suite(SUITE), adapter, store, options)).run_id
        finally:
            await adapter.aclose()

    return asyncio.run(go())


def test_v1_against_v2_lists_exactly_the_regressed_cases(store):
    v1, v2 = run_demo(store, "v1"), run_demo(store, "v2")
    comparison = compare_runs(store, v1, v2)
    assert {c.case_id for c in comparison.of("regressed")} == set(EXPECTED_V2_FAILURES)
    assert comparison.of("fixed") == [] and comparison.of("flaky") == []
    assert {c.case_id: c.cand_failures for c in comparison.of("regressed")} == {
        case_id: (failure,) for case_id, failure in EXPECTED_V2_FAILURES.items()
    }
    # The other direction: the same cases are fixed.
    back = compare_runs(store, v2, v1)
    assert {c.case_id for c in back.of("fixed")} == set(EXPECTED_V2_FAILURES)
    assert comparison.failure_types == {"loop": (0, 2), "permission_violation": (0, 1)}


def test_the_overall_change_matches_statsmodels_and_mcnemar(store):
    v1, v2 = run_demo(store, "v1"), run_demo(store, "v2")
    comparison = compare_runs(store, v1, v2)
    cases = len(load_run(store, v1).cases)
    regressed = len(EXPECTED_V2_FAILURES)
    low, high = confint_proportions_2indep(
        cases - regressed, cases, cases, cases, method="newcomb", compare="diff"
    )
    change = comparison.overall.change
    assert abs(change.low - low) < 1e-9 and abs(change.high - high) < 1e-9
    table = [[cases - regressed, regressed], [0, 0]]  # rows: base pass/fail; cols: cand
    expected_p = mcnemar(table, exact=True).pvalue
    assert abs(comparison.overall.paired.p_value - expected_p) < 1e-12


def test_metric_deltas_show_v2_calling_more_tools(store):
    comparison = compare_runs(store, run_demo(store, "v1"), run_demo(store, "v2"))
    tools = next(m for m in comparison.metrics if m.name == "tool calls / attempt")
    assert tools.change is not None and tools.change > 0


def test_a_case_whose_repeats_disagree_is_flaky_and_kept_out_of_the_delta(store):
    base = run_demo(store, "v1", tags=["base"])
    cand = run_demo(store, "v1", tags=["cand"])
    # Make one case of the candidate disagree across its repeats by storing a failing repeat.
    store.save_attempts(
        [
            AttemptRecord(
                run_id=cand,
                case_id="count-lines",
                attempt=2,
                verdict="FAIL",
                failure_type="format",
                reason="scripted",
            )
        ]
    )
    comparison = compare_runs(store, base, cand)
    assert [c.case_id for c in comparison.of("flaky")] == ["count-lines"]
    assert "1 of 2 repeats passed" in comparison.flaky["count-lines"]
    assert comparison.overall.cases == len(load_run(store, base).cases) - 1
    assert comparison.overall.change.estimate == 0.0


def test_a_case_whose_verdict_changed_over_the_last_three_runs_of_a_version_is_flaky(store):
    runs = [run_demo(store, "v1", tags=[f"r{i}"]) for i in range(3)]
    # The middle run's count-lines failed.
    middle = store.get_run(runs[1])
    with store.engine.begin() as connection:
        connection.execute(
            update(attempts)
            .where(attempts.c.run_id == middle.run_id, attempts.c.case_id == "count-lines")
            .values(verdict="FAIL", failure_type="format")
        )
    newest = load_run(store, runs[2])
    flaky = flaky_cases(store, newest)
    assert list(flaky) == ["count-lines"]
    assert "PASS, FAIL, PASS" in flaky["count-lines"]


def test_runs_are_named_by_id_prefix_tag_latest_and_latest_passing(store):
    v1 = run_demo(store, "v1")
    v2 = run_demo(store, "v2")
    assert resolve_run_ref(store, "v1") == v1
    assert resolve_run_ref(store, "latest") == v2
    assert resolve_run_ref(store, v2[:-2]) == v2
    assert resolve_run_ref(store, "latest-passing") == v1  # v2 failed its P0 gate


def test_the_markdown_is_a_pr_comment_naming_the_regressions(store):
    comparison = compare_runs(store, run_demo(store, "v1"), run_demo(store, "v2"))
    text = to_markdown(comparison)
    assert "### Regressed (3)" in text
    for case_id in EXPECTED_V2_FAILURES:
        assert f"`{case_id}`" in text
    assert "| **all** | 14 |" in text


def test_a_run_info_without_cases_compares_as_empty(store):
    store.create_run(RunInfo(run_id="empty", suite="s", agent="a"), [])
    comparison = compare_runs(store, "empty", "empty")
    assert comparison.cases == [] and comparison.overall.cases == 0
