"""Cases that stopped discriminating: always passing, never passing, over the last runs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from seatrial.case import Case
from seatrial.compare._stale import MIN_RUNS, stale_cases
from seatrial.errors import InputError, RunNotFound
from seatrial.record import AttemptRecord, RunInfo, Verdict
from seatrial.store import Store

_clock = [1_000.0]


def stored_run(
    store: Store,
    verdicts: Mapping[str, Sequence[Verdict]],
    *,
    suite: str = "golden",
    agent: str = "python:agent:v1",
    tags: Sequence[str] = (),
    status: str = "finished",
) -> str:
    """Store a run whose case ``id`` has one attempt per verdict listed, in that order."""
    _clock[0] += 60
    run_id = f"run-{int(_clock[0])}"
    info = RunInfo(run_id=run_id, suite=suite, agent=agent, tags=list(tags), started_at=_clock[0])
    cases = [Case(id=case_id, name=f"the {case_id} case", input="hi") for case_id in verdicts]
    store.create_run(info, cases)
    store.save_attempts(
        [
            AttemptRecord(run_id=run_id, case_id=case_id, attempt=n, verdict=verdict)
            for case_id, listed in verdicts.items()
            for n, verdict in enumerate(listed, start=1)
        ]
    )
    store.finish_run(run_id, status, _clock[0] + 30)
    return run_id


def three_runs(store: Store) -> list[str]:
    return [
        stored_run(store, {"always": ["PASS"] * 3, "never": ["FAIL"] * 3, "mixed": ["PASS"] * 3}),
        stored_run(store, {"always": ["PASS"] * 3, "never": ["ERROR"] * 3, "mixed": ["FAIL"] * 3}),
        stored_run(
            store, {"always": ["PASS"] * 3, "never": ["FAIL", "WARNING", "FAIL"], "mixed": ["PASS"]}
        ),
    ]


def test_always_passing_cases_graduate_and_never_passing_ones_go_to_review(store):
    runs = three_runs(store)
    report = stale_cases(store, suite="golden", last=3)
    assert [c.case_id for c in report.graduate] == ["always"]
    assert [c.case_id for c in report.review] == ["never"]
    always = report.graduate[0]
    assert (always.runs, always.attempts, always.passed) == (3, 9, 9)
    assert always.oldest_run_id == runs[0] and always.name == "the always case"
    assert report.review[0].verdicts == {"ERROR": 3, "FAIL": 5, "WARNING": 1}
    assert report.run_ids == tuple(reversed(runs))
    assert not report.notes


def test_fewer_runs_than_asked_uses_them_all_and_says_so(store):
    three_runs(store)
    report = stale_cases(store, suite="golden")
    assert len(report.run_ids) == 3 and report.asked == 20
    assert any("only 3 finished runs are stored" in note for note in report.notes)
    assert [c.case_id for c in report.graduate] == ["always"]


def test_the_window_is_the_newest_runs_only(store):
    stored_run(store, {"always": ["FAIL"], "never": ["PASS"]})
    stored_run(store, {"always": ["PASS"], "never": ["FAIL"]})
    stored_run(store, {"always": ["PASS"], "never": ["FAIL"]})
    report = stale_cases(store, suite="golden", last=2)
    assert [c.case_id for c in report.graduate] == ["always"]
    assert [c.case_id for c in report.review] == ["never"]
    wider = stale_cases(store, suite="golden", last=3)
    assert not wider.graduate and not wider.review


def test_replays_unfinished_runs_other_suites_and_agents_are_left_out(store):
    three_runs(store)
    stored_run(store, {"always": ["FAIL"]}, tags=["replay"])
    stored_run(store, {"always": ["FAIL"]}, status="interrupted")
    stored_run(store, {"always": ["FAIL"]}, suite="other")
    stored_run(store, {"always": ["FAIL"]}, agent="python:agent:v2")
    report = stale_cases(store, suite="golden", agent="python:agent:v1")
    assert [c.case_id for c in report.graduate] == ["always"]
    assert len(report.run_ids) == 3


def test_a_case_seen_in_one_run_only_is_not_judged(store):
    stored_run(store, {"always": ["PASS"]})
    stored_run(store, {"always": ["PASS"], "brand-new": ["PASS", "PASS"]})
    report = stale_cases(store, suite="golden")
    assert [c.case_id for c in report.graduate] == ["always"]
    assert report.too_few_runs == ("brand-new",)
    assert any(f"fewer than {MIN_RUNS}" in note for note in report.notes)


def test_cases_removed_from_the_suite_are_not_listed(store):
    stored_run(store, {"gone": ["PASS"], "kept": ["FAIL"]})
    stored_run(store, {"gone": ["PASS"], "kept": ["FAIL"]})
    stored_run(store, {"kept": ["FAIL"]})
    report = stale_cases(store, suite="golden")
    assert not report.graduate
    assert [c.case_id for c in report.review] == ["kept"]


def test_report_dict_is_json(store):
    three_runs(store)
    data = json.loads(json.dumps(stale_cases(store, suite="golden").to_dict()))
    assert [c["case_id"] for c in data["graduate"]] == ["always"]
    assert data["runs"] == 3 and data["asked"] == 20 and data["min_runs"] == MIN_RUNS


def test_no_run_of_the_suite_and_a_bad_window_are_input_errors(store):
    with pytest.raises(RunNotFound, match="golden"):
        stale_cases(store, suite="golden")
    with pytest.raises(InputError, match="--last"):
        stale_cases(store, suite="golden", last=0)


def test_case_verdict_counts_groups_by_run_case_and_verdict(store):
    first = stored_run(store, {"a": ["PASS", "FAIL", "PASS"], "b": ["ERROR"]})
    second = stored_run(store, {"a": ["WARNING"]})
    empty = stored_run(store, {})
    counts = store.case_verdict_counts([first, second, empty])
    assert counts == {
        first: {"a": {"PASS": 2, "FAIL": 1}, "b": {"ERROR": 1}},
        second: {"a": {"WARNING": 1}},
        empty: {},
    }
    assert store.case_verdict_counts([]) == {}
