"""A stored run read as :class:`RunData`: one builder, so a comparison, a report's gate and the
dashboard's gate column see the same cases, in the same order, with the same figures."""

from __future__ import annotations

import time

from seatrial.case import Case
from seatrial.compare import CaseHead, load_run, run_data, run_statistics
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.report import build_report
from seatrial.store import attempt_figures
from seatrial.web._runs_queries import light_runs


def _stored(store) -> RunInfo:
    info = RunInfo(run_id="r1", suite="s", agent="a", started_at=time.time())
    cases = [
        Case(id="b", input="x", priority="P0", category="booking", tags=["smoke"]),
        Case(id="a", input="x"),
        Case(id="never-ran", input="x"),
    ]
    store.create_run(info, cases)
    metrics = Metrics(tool_calls=2, wall_time_ms=12.5, input_tokens=3, output_tokens=4)
    store.save_attempts(
        [
            AttemptRecord(run_id="r1", case_id="a", attempt=2, verdict="FAIL", failure_type="x"),
            AttemptRecord(run_id="r1", case_id="a", attempt=1, verdict="PASS", metrics=metrics),
            AttemptRecord(run_id="r1", case_id="b", attempt=1, verdict="PASS"),
            AttemptRecord(run_id="r1", case_id="stray", attempt=1, verdict="ERROR"),
        ]
    )
    store.finish_run("r1", "finished", time.time())
    return store.get_run("r1")


def test_cases_come_in_suite_order_then_the_unlisted_and_the_never_run_are_left_out(store):
    run = load_run(store, _stored(store).run_id)
    assert [c.case_id for c in run.cases] == ["b", "a", "stray"]
    b, a, stray = run.cases
    assert (b.priority, b.category, b.tags) == ("P0", "booking", ("smoke",))
    assert a.verdicts == ("PASS", "FAIL") and a.failure_types == (None, "x")
    assert (a.wall_time_ms[0], a.tokens[0], a.tool_calls[0]) == (12.5, 7, 2)
    assert (stray.name, stray.category, stray.priority, stray.tags) == ("", "", "P1", ())


def test_the_dashboard_reads_a_run_exactly_as_comparisons_do(store):
    info = _stored(store)
    assert light_runs(store, [info]) == {"r1": load_run(store, "r1")}


def test_a_report_figures_its_statistics_on_the_cases_it_shows(store):
    # The report lists no case the run did not list, and its statistics and gate agree with it.
    info = _stored(store)
    report = build_report(store, info.run_id)
    assert [c.case_id for c in report.cases] == ["b", "a"]
    listed = [CaseHead.of(case) for case in store.run_cases("r1")]
    shown = [f for f in attempt_figures(store, ["r1"])["r1"] if f.case_id != "stray"]
    assert report.statistics == run_statistics(run_data(info, listed, shown))
