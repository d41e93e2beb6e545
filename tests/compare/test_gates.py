"""Release gates written before the run: each check's figure and verdict, and the gates file."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

from seatrial.case import GateSpec, gates_hash, load_gates
from seatrial.compare import (
    CaseOutcome,
    RunData,
    builtin_outcomes,
    evaluate_gates,
    gate_settings,
    gates_changed,
)
from seatrial.errors import SuiteError
from seatrial.record import RunInfo, RunSettings


def case(
    case_id: str,
    verdicts: str,
    *,
    category: str = "c",
    priority: str = "P1",
    failure: str | None = None,
    wall_ms: float = 100.0,
    tokens: int = 10,
    cost: float = 0.001,
) -> CaseOutcome:
    """A case whose repeats have these verdicts (P = PASS, F = FAIL, E = ERROR, W = WARNING)."""
    verdict_of = {"P": "PASS", "F": "FAIL", "E": "ERROR", "W": "WARNING"}
    verdicts_ = tuple(verdict_of[v] for v in verdicts)
    return CaseOutcome(
        case_id=case_id,
        name="",
        category=category,
        priority=priority,
        tags=("smoke",) if category == "c" else (),
        verdicts=verdicts_,  # type: ignore[arg-type]
        failure_types=tuple(None if v == "PASS" else failure for v in verdicts_),
        wall_time_ms=tuple(wall_ms for _ in verdicts),
        tokens=tuple(tokens for _ in verdicts),
        cost_usd=tuple(cost for _ in verdicts),
        tool_calls=tuple(1 for _ in verdicts),
    )


def run(*cases: CaseOutcome, run_id: str = "cand", settings: dict | None = None) -> RunData:
    info = RunInfo(run_id=run_id, suite="s", agent="a", settings=settings or {})
    return RunData(info=info, cases=cases)


def only(outcomes, check):
    [found] = [o for o in outcomes if o.check == check]
    return found


def test_min_pass_rate_shows_the_wilson_interval_and_fails_below_the_threshold():
    data = run(case("a", "PPPPF"), case("b", "PPPFF", category="other"))
    [outcome] = evaluate_gates(data, [GateSpec(category="c", min_pass_rate=0.9)])
    low, high = proportion_confint(4, 5, method="wilson")
    assert outcome.figure == f"80.0% [{low:.1%}, {high:.1%}] (4/5 attempts)"
    assert (outcome.gate, outcome.verdict) == ("category=c", "unmet")
    [met] = evaluate_gates(data, [GateSpec(category="c", min_pass_rate=0.8)])
    assert met.verdict == "met"


def test_twenty_repeats_with_one_write_violation_fail_a_zero_violation_gate():
    # Risky samples run many times: a read-only set run 20 times must show zero write violations.
    clean = case("read", "P" * 20)
    violating = case("read2", "P" * 19 + "F", failure="permission_violation")
    gate = GateSpec(id="read-only", max_failures_of_type={"permission_violation": 0})
    outcome = only(
        evaluate_gates(run(clean, violating), [gate]), "max_failures_of_type.permission_violation"
    )
    assert (outcome.verdict, outcome.figure, outcome.detail) == ("unmet", "1 attempt", "read2")
    ok = only(evaluate_gates(run(clean), [gate]), "max_failures_of_type.permission_violation")
    assert ok.verdict == "met"


def test_a_violation_in_a_flaky_case_still_fails_the_hard_gate():
    flaky = case("w", "PF", failure="permission_violation")
    gate = GateSpec(max_failures_of_type={"permission_violation": 0})
    [outcome] = evaluate_gates(run(flaky), [gate], flaky=["w"])
    assert outcome.verdict == "unmet"


def test_pass_hat_k_gate_uses_cases_with_enough_repeats_and_says_when_none_have_them():
    data = run(case("a", "PPPP"), case("b", "PPPF"), case("c1", "P"))
    outcome = only(
        evaluate_gates(data, [GateSpec(min_pass_hat_k={"k": 4, "min": 0.6})]),
        "min_pass_hat_k (k=4)",
    )
    assert outcome.figure == "pass^4 0.500 over 2 cases"  # (1 + 0) / 2
    assert outcome.verdict == "unmet"
    assert "1 case with fewer than 4 repeats left out" in outcome.detail
    single = only(
        evaluate_gates(run(case("a", "P")), [GateSpec(min_pass_hat_k={"k": 3, "min": 0.5})]),
        "min_pass_hat_k (k=3)",
    )
    assert single.verdict == "not_evaluated" and "--repeats 3" in single.detail


def test_max_regression_fails_only_on_a_drop_the_interval_supports():
    base = run(*[case(f"c{i}", "PPPPP") for i in range(20)], run_id="base")
    slightly_worse = run(*[case(f"c{i}", "PPPPP" if i else "PPPPF") for i in range(20)])
    much_worse = run(*[case(f"c{i}", "PPPPP" if i < 10 else "FFFFF") for i in range(20)])
    gate = GateSpec(max_regression={"points": 5, "confidence": 0.95})
    [small] = evaluate_gates(slightly_worse, [gate], base)
    [large] = evaluate_gates(much_worse, [gate], base)
    assert small.verdict == "met"
    assert large.verdict == "unmet"
    assert "regressed: c10" in large.detail
    assert large.figure.startswith("change -50.0 points")


def test_max_regression_leaves_flaky_cases_out_and_without_a_baseline_is_not_evaluated():
    base = run(*[case(f"c{i}", "PPP") for i in range(10)], run_id="base")
    cand = run(*[case(f"c{i}", "PPP" if i >= 5 else "FFF") for i in range(10)])
    gate = GateSpec(max_regression={"points": 0})
    flaky = [f"c{i}" for i in range(5)]
    [outcome] = evaluate_gates(cand, [gate], base, flaky=flaky)
    assert outcome.verdict == "met" and "5 flaky cases left out" in outcome.detail
    [none] = evaluate_gates(cand, [gate])
    assert none.verdict == "not_evaluated" and "--baseline" in none.detail


def test_latency_token_and_cost_budgets():
    data = run(case("a", "PP", wall_ms=900, tokens=600, cost=0.02), case("b", "PP", wall_ms=100))
    outcomes = evaluate_gates(
        data, [GateSpec(max_latency_p95_ms=500, max_tokens=1000, max_cost_usd=0.1)]
    )
    assert only(outcomes, "max_latency_p95_ms").verdict == "unmet"
    assert only(outcomes, "max_latency_p95_ms").figure == "p95 900 ms"
    tokens = only(outcomes, "max_tokens")
    assert (tokens.figure, tokens.verdict) == ("1220 tokens", "unmet")
    cost = only(outcomes, "max_cost_usd")
    assert (cost.figure, cost.verdict) == ("$0.0420", "met")


def test_selectors_pick_cases_by_priority_and_tag_and_say_when_nothing_matches():
    data = run(case("a", "F", priority="P0"), case("b", "P", category="x"))
    [p0] = evaluate_gates(data, [GateSpec(priority="P0", min_pass_rate=1.0)])
    assert p0.verdict == "unmet" and p0.figure.endswith("(0/1 attempts)")
    [tagged] = evaluate_gates(data, [GateSpec(tag="smoke", min_pass_rate=0.0)])
    assert tagged.figure.endswith("(0/1 attempts)")
    [nothing] = evaluate_gates(data, [GateSpec(category="nope", min_pass_rate=0.5)])
    assert nothing.verdict == "not_evaluated"


def test_builtin_gates_fail_a_run_whose_p0_case_failed():
    [outcome] = builtin_outcomes(
        run(case("p0", "F", priority="P0", failure="loop"), case("b", "P"))
    )
    assert outcome.verdict == "unmet" and outcome.detail == "p0 FAIL (loop)"


def test_a_gates_file_with_a_mistake_names_the_line_and_the_fix(tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text(
        "gates:\n  - category: booking\n    min_pass_rate: 0.9\n  - category: refund\n"
        "    max_failure_of_type: {loop: 0}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_gates(path)
    [problem] = caught.value.problems
    assert problem.line == 5
    assert "max_failures_of_type" in str(problem)
    path.write_text("gates:\n  - category: booking\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="at least one check"):
        load_gates(path)


def test_a_report_says_when_the_gates_changed_after_the_run_started(tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - min_pass_rate: 0.9\n", encoding="utf-8")
    settings = gate_settings(load_gates(path), f"file:{path}")
    assert settings["gates_hash"] == gates_hash([GateSpec(min_pass_rate=0.9)])
    assert gates_changed(RunSettings.model_validate(settings)) is None
    path.write_text("gates:\n  - min_pass_rate: 0.5\n", encoding="utf-8")
    warning = gates_changed(RunSettings.model_validate(settings))
    assert warning is not None and "changed after this run started" in warning
    assert str(path) in warning
