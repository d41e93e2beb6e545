"""Probe drift: the demo agent's model change moves its behaviour, and the alarm says where."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import pytest
from scipy.stats import ks_2samp

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.compare import (
    POOLED,
    DriftThresholds,
    default_baseline,
    ks_statistic,
    probe_drift,
    total_variation,
)
from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import PROJECT, SUITE
from seatrial.demo.agents import V1, V2
from seatrial.errors import InputError, RunNotFound
from seatrial.record import AttemptRecord
from seatrial.run import RunOptions, run_suite_async
from seatrial.store import Store


def run_demo_agent(store: Store, version: str, repeats: int = 3, tags: tuple[str, ...] = ()) -> str:
    """Run the demo suite against agent ``version`` in-process, as ``seatrial demo`` does."""

    async def go() -> str:
        adapter = resolve_agent(f"python:seatrial.demo.agents:{version}", base_dir=PROJECT)
        try:
            options = RunOptions(repeats=repeats, tags=list(tags), settings={"probe": True})
            outcome = await run_suite_async(load_suite(SUITE), adapter, store, options, None)
        finally:
            await adapter.aclose()
        return outcome.run_id

    return asyncio.run(go())


def test_v2_against_v1_alarms_on_the_looping_read_naming_the_probe(store):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    report = probe_drift(store, v2, v1)
    suite = load_suite(SUITE).name
    sequence_alarms = {a.case_id: a for a in report.alarms if a.metric == "tool_sequence"}
    alarm = sequence_alarms["read-missing-config"]
    assert alarm.distance == 1.0
    message = alarm.message()
    assert f"probe {suite}" in message and "read-missing-config" in message
    assert f"read_file x{V1.read_attempts} 100% -> 0%" in message
    assert f"read_file x{V2.read_attempts} 0% -> 100%" in message
    # v1 passes every case; every case v2 fails moved its verdicts from PASS to FAIL.
    verdict_alarms = {a.case_id: a for a in report.alarms if a.metric == "verdict"}
    assert set(verdict_alarms) - {POOLED} == set(EXPECTED_V2_FAILURES)
    cases = len(load_suite(SUITE).cases)
    assert verdict_alarms[POOLED].distance == pytest.approx(len(EXPECTED_V2_FAILURES) / cases)
    assert report.probe and report.suite == suite and report.baseline_reason == "given"


def test_two_runs_of_the_same_agent_raise_no_alarm_and_the_earlier_is_the_baseline(store):
    first = run_demo_agent(store, "v1")
    second = run_demo_agent(store, "v1")
    report = probe_drift(store, second)
    assert report.baseline_run_id == first
    assert "newest earlier finished run" in report.baseline_reason
    assert not report.alarmed
    assert report.pooled is not None
    assert all(m.distance == 0 for s in (report.pooled, *report.cases) for m in s.metrics)


def test_pooled_distances_equal_a_reference_over_all_attempts(store):
    v1 = run_demo_agent(store, "v1", repeats=2)
    v2 = run_demo_agent(store, "v2", repeats=2)
    report = probe_drift(store, v2, v1)

    def names(record: AttemptRecord) -> tuple[str, ...]:
        assert record.trace is not None
        return tuple(call.name for call in record.trace.tool_calls())

    def tv(a: list[object], b: list[object]) -> float:
        ca, cb = Counter(a), Counter(b)
        return sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in ca.keys() | cb.keys()) / 2

    base = store.attempts(v1, with_traces=True)
    run = store.attempts(v2, with_traces=True)
    expected = {
        "tool_sequence": tv([names(a) for a in base], [names(a) for a in run]),
        "verdict": tv([a.verdict for a in base], [a.verdict for a in run]),
        "reply_length": ks_2samp(
            [len(a.response) for a in base], [len(a.response) for a in run]
        ).statistic,
    }
    assert report.pooled is not None and report.pooled.case_id == POOLED
    got = {m.metric: m.distance for m in report.pooled.metrics}
    assert got == pytest.approx(expected, abs=1e-12)
    assert expected["tool_sequence"] > 0 and expected["verdict"] > 0


def test_ks_statistic_equals_scipys_with_ties_and_unequal_sizes():
    rng = random.Random(7)
    for _ in range(200):
        a = [rng.randint(0, 30) for _ in range(rng.randint(1, 25))]
        b = [rng.randint(5, 40) for _ in range(rng.randint(1, 25))]
        assert ks_statistic(a, b) == pytest.approx(ks_2samp(a, b).statistic, abs=1e-12)


def test_total_variation_is_zero_for_equal_shares_and_one_for_disjoint_samples():
    assert total_variation(["a", "b"], ["b", "a", "a", "b"]) == 0
    assert total_variation(["a"], ["b", "c"]) == 1
    assert total_variation(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.25)


def test_single_attempts_show_per_case_distances_but_only_pooled_ones_alarm(store):
    v1 = run_demo_agent(store, "v1", repeats=1)
    v2 = run_demo_agent(store, "v2", repeats=1)
    report = probe_drift(store, v2, v1)
    moved = {s.case_id: s for s in report.cases if s.moved}
    assert "read-missing-config" in moved
    assert all(not m.alarm and m.note for s in report.cases for m in s.metrics)
    assert report.alarms and {a.case_id for a in report.alarms} == {POOLED}
    assert any("repeats" in note for note in report.notes)


def test_a_metric_threshold_of_one_silences_that_metric_only(store):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    quiet = DriftThresholds(tool_sequence=1.0)
    report = probe_drift(store, v2, v1, thresholds=quiet)
    metrics = {a.metric for a in report.alarms}
    assert "tool_sequence" not in metrics and "verdict" in metrics


def test_default_baseline_skips_replays_and_other_agents(store):
    older = run_demo_agent(store, "v1", repeats=1)
    run_demo_agent(store, "v2", repeats=1)
    run_demo_agent(store, "v1", repeats=1, tags=("replay",))
    newest = run_demo_agent(store, "v1", repeats=1)
    assert default_baseline(store, newest)[0] == older
    with pytest.raises(RunNotFound, match="--baseline"):
        default_baseline(store, older)


def test_a_run_cannot_be_its_own_baseline(store):
    run = run_demo_agent(store, "v1", repeats=1)
    with pytest.raises(InputError, match="own baseline"):
        probe_drift(store, run, run)


def test_report_dict_is_json_and_names_each_alarm(store):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    data = json.loads(json.dumps(probe_drift(store, v2, v1).to_dict()))
    assert data["baseline_run_id"] == v1 and data["run_id"] == v2
    assert data["thresholds"]["tool_sequence"] == DriftThresholds().tool_sequence
    alarm = next(a for a in data["alarms"] if a["case_id"] == "read-missing-config")
    assert alarm["suite"] in alarm["message"]
    case = next(c for c in data["cases"] if c["case_id"] == "read-missing-config")
    assert {m["metric"] for m in case["metrics"]} == {"tool_sequence", "reply_length", "verdict"}
