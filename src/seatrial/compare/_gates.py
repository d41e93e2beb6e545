"""Evaluating release gates on a run: each check of each gate, with its figure.

Built in: every P0 case must pass, and the suite's ``gate.min_pass_rate``. Written: the
``gates:`` stored with the run when it started (their format is :class:`seatrial.case.GateSpec`).
With no gate written anywhere, the gate is "every case passes" (:func:`every_case_passes`, as in
pytest and promptfoo). Each check gives a :class:`GateOutcome` with its figure; a check that
cannot be evaluated (no baseline, too few repeats) says so and neither passes nor blocks. The
run's verdict over all of them is :func:`seatrial.compare.run_meets_gates`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from seatrial.case import GateSpec
from seatrial.compare._runs import CaseOutcome, RunData
from seatrial.compare._stats import (
    latency_summary,
    mean_pass_hat_k,
    newcombe_difference,
    significant_drop,
    wilson_interval,
)

GateVerdict = Literal["met", "unmet", "not_evaluated"]

NO_GATE = "no gate configured"
"""The name of the gate a run has when none is written anywhere."""
NO_GATE_RULE = "no gate configured: every case must pass"
"""What the reports say when that gate is the run's."""
_NAMED = 10
"""Failing cases a gate's detail names before "and N more"."""

_BUDGET_FORMATS = {
    "max_latency_p95_ms": ("p95 {:.0f} ms", "{:.0f} ms"),
    "max_tokens": ("{:.0f} tokens", "{:.0f}"),
    "max_cost_usd": ("${:.4f}", "${:.4f}"),
}
"""How a budget's figure and its limit are shown."""


@dataclass(frozen=True)
class GateOutcome:
    """One check of one gate on one run."""

    gate: str
    """The gate's name (its id or selector)."""
    check: str
    """What was checked: ``p0_cases``, ``min_pass_rate``, ``max_regression`` ..."""
    figure: str
    """What the run measured, with its interval where there is one."""
    threshold: str
    """What the gate asks."""
    verdict: GateVerdict
    """met, unmet, or not_evaluated (neither passes nor blocks; ``detail`` says why)."""
    detail: str = ""
    """Why, when unmet or not evaluated; which cases, when that helps."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    def line(self) -> str:
        """One line: ``gate check: figure, needs threshold: VERDICT (detail)``."""
        verdict = {"met": "met", "unmet": "UNMET", "not_evaluated": "not evaluated"}
        text = f"{self.gate} {self.check}: {self.figure}, needs {self.threshold}: "
        text += verdict[self.verdict]
        return f"{text} ({self.detail})" if self.detail else text


def builtin_outcomes(run: RunData) -> list[GateOutcome]:
    """The gates every run has: P0 cases pass; the suite's ``gate.min_pass_rate``."""
    outcomes = []
    p0 = [c for c in run.cases if c.priority == "P0"]
    failing = [c for c in p0 if c.verdict in ("FAIL", "ERROR")]
    if p0:
        detail = ", ".join(
            f"{c.case_id} {c.verdict}"
            + (
                f" ({', '.join(sorted({t for t in c.failure_types if t}))})"
                if any(c.failure_types)
                else ""
            )
            for c in failing
        )
        outcomes.append(
            GateOutcome(
                "P0",
                "p0_cases",
                f"{len(p0) - len(failing)} of {len(p0)} P0 cases pass",
                "every P0 case passes",
                "unmet" if failing else "met",
                detail,
            )
        )
    minimum = run.info.settings.gate.get("min_pass_rate")
    if minimum is not None:
        outcomes.append(_min_pass_rate("suite", list(run.cases), float(minimum)))
    if not run.cases:
        outcomes.append(GateOutcome("run", "attempts", "0 attempts", "at least one", "unmet"))
    return outcomes


def every_case_passes(run: RunData) -> GateOutcome | None:
    """The gate of a run with no gate written anywhere: every case passes (pytest's and
    promptfoo's rule: a failing test fails the run).

    Each repeat counts, as promptfoo's ``--repeat`` counts each: one FAIL or ERROR attempt
    fails the gate, so a case flaky within the run fails it (write ``min_pass_rate`` or
    ``min_pass_hat_k`` to allow flakiness). A WARNING attempt (a judge unsure, a check not
    evaluated) is not a failure: it is named in the detail for review. But a run with no
    PASS at all has shown nothing to work and does not meet the gate. None for a run with no
    attempt: the built-in ``attempts`` check already fails it.
    """
    if not run.cases:
        return None
    failing = [c for c in run.cases if any(v in ("FAIL", "ERROR") for v in c.verdicts)]
    warned = sum(v == "WARNING" for c in run.cases for v in c.verdicts)
    passes = sum(c.passes for c in run.cases)
    attempts = sum(c.n for c in run.cases)
    figure = f"{len(run.cases) - len(failing)} of {len(run.cases)} cases pass"
    figure += f" ({passes}/{attempts} attempts PASS)"
    if failing:
        named = [_failing_case(c) for c in failing[:_NAMED]]
        more = len(failing) - len(named)
        detail = ", ".join(named) + (f" and {more} more" if more else "")
        verdict: GateVerdict = "unmet"
    elif passes == 0:
        detail = f"no attempt passed ({warned} WARNING): nothing was shown to work"
        verdict = "unmet"
    else:
        plural = "attempt" if warned == 1 else "attempts"
        detail = f"{warned} WARNING {plural} to review (not failures)" if warned else ""
        verdict = "met"
    return GateOutcome(NO_GATE, "every_case", figure, "every case passes", verdict, detail)


def _failing_case(case: CaseOutcome) -> str:
    """``b FAIL 2 of 3 (loop)``: the case, its failed attempts and their failure types."""
    failed = [v for v in case.verdicts if v in ("FAIL", "ERROR")]
    text = f"{case.case_id} {'FAIL' if 'FAIL' in failed else 'ERROR'}"
    if case.n > 1:
        text += f" {len(failed)} of {case.n}"
    pairs = zip(case.verdicts, case.failure_types, strict=True)
    types = sorted({t for v, t in pairs if t and v in ("FAIL", "ERROR")})
    return text + (f" ({', '.join(types)})" if types else "")


def select(cases: Iterable[CaseOutcome], gate: GateSpec) -> list[CaseOutcome]:
    """The cases a gate applies to."""
    return [
        c
        for c in cases
        if (gate.category is None or c.category == gate.category)
        and (gate.priority is None or c.priority == gate.priority)
        and (gate.tag is None or gate.tag in c.tags)
    ]


def evaluate_gates(
    run: RunData,
    gates: list[GateSpec],
    baseline: RunData | None = None,
    flaky: Iterable[str] = (),
) -> list[GateOutcome]:
    """Every check of every gate on ``run``; ``max_regression`` against ``baseline``.

    Flaky cases are left out of the regression delta only; every other check counts them.
    """
    flaky_ids = set(flaky)
    outcomes: list[GateOutcome] = []
    for gate in gates:
        cases = select(run.cases, gate)
        name = gate.name
        if not cases:
            outcomes.append(
                GateOutcome(
                    name,
                    "cases",
                    "no case selected",
                    "at least one case",
                    "not_evaluated",
                    "no case of this run matches the gate's category/priority/tag",
                )
            )
            continue
        if gate.min_pass_rate is not None:
            outcomes.append(_min_pass_rate(name, cases, gate.min_pass_rate))
        if gate.min_pass_hat_k is not None:
            outcomes.append(
                _pass_hat_k(name, cases, gate.min_pass_hat_k.k, gate.min_pass_hat_k.min)
            )
        for failure_type, most in gate.max_failures_of_type.items():
            count = sum(t == failure_type for c in cases for t in c.failure_types)
            where = sorted({c.case_id for c in cases if failure_type in c.failure_types})
            outcomes.append(
                GateOutcome(
                    name,
                    f"max_failures_of_type.{failure_type}",
                    f"{count} attempt" if count == 1 else f"{count} attempts",
                    f"at most {most}",
                    "unmet" if count > most else "met",
                    ", ".join(where) if count > most else "",
                )
            )
        if gate.max_regression is not None:
            outcomes.append(_regression(name, gate, cases, baseline, flaky_ids))
        latency = latency_summary([ms for c in cases for ms in c.wall_time_ms])
        budgets = (
            ("max_latency_p95_ms", gate.max_latency_p95_ms, latency.p95 if latency else 0.0),
            ("max_tokens", gate.max_tokens, sum(t for c in cases for t in c.tokens)),
            ("max_cost_usd", gate.max_cost_usd, sum(x for c in cases for x in c.cost_usd)),
        )
        for check, limit, value in budgets:
            if limit is not None:
                shown = _BUDGET_FORMATS[check]
                outcomes.append(
                    GateOutcome(
                        name,
                        check,
                        shown[0].format(value),
                        "at most " + shown[1].format(limit),
                        "unmet" if value > limit else "met",
                    )
                )
    return outcomes


def _min_pass_rate(name: str, cases: list[CaseOutcome], minimum: float) -> GateOutcome:
    passes = sum(c.passes for c in cases)
    n = sum(c.n for c in cases)
    interval = wilson_interval(passes, n)
    return GateOutcome(
        name,
        "min_pass_rate",
        f"{interval.format()} ({passes}/{n} attempts)",
        f"at least {minimum:.1%}",
        "unmet" if interval.estimate < minimum else "met",
    )


def _pass_hat_k(name: str, cases: list[CaseOutcome], k: int, minimum: float) -> GateOutcome:
    counts = [(c.n, c.passes) for c in cases if c.n >= k]
    threshold = f"at least {minimum:.2f}"
    if not counts:
        most = max(c.n for c in cases)
        return GateOutcome(
            name,
            f"min_pass_hat_k (k={k})",
            f"cases have at most {most} repeats",
            threshold,
            "not_evaluated",
            f"pass^{k} needs cases with {k} or more repeats: run with --repeats {k}",
        )
    value = mean_pass_hat_k(counts, k)
    skipped = len(cases) - len(counts)
    return GateOutcome(
        name,
        f"min_pass_hat_k (k={k})",
        f"pass^{k} {value:.3f} over {len(counts)} cases",
        threshold,
        "unmet" if value < minimum else "met",
        f"{skipped} {'case' if skipped == 1 else 'cases'} with fewer than {k} repeats left out"
        if skipped
        else "",
    )


def _regression(
    name: str,
    gate: GateSpec,
    cases: list[CaseOutcome],
    baseline: RunData | None,
    flaky: set[str],
) -> GateOutcome:
    assert gate.max_regression is not None
    rule = gate.max_regression
    threshold = f"drop of at most {rule.points:g} points at {rule.confidence:.0%} confidence"
    if baseline is None:
        return GateOutcome(
            name,
            "max_regression",
            "no baseline",
            threshold,
            "not_evaluated",
            "give a baseline run (--baseline latest-passing, a run id or a tag)",
        )
    base_by_id = {c.case_id: c for c in select(baseline.cases, gate)}
    shared = [c for c in cases if c.case_id in base_by_id and c.case_id not in flaky]
    if not shared:
        return GateOutcome(
            name,
            "max_regression",
            "no case in both runs",
            threshold,
            "not_evaluated",
            f"the baseline {baseline.info.run_id} shares no non-flaky case with this run",
        )
    base_pass = sum(base_by_id[c.case_id].passes for c in shared)
    base_n = sum(base_by_id[c.case_id].n for c in shared)
    cand_pass = sum(c.passes for c in shared)
    cand_n = sum(c.n for c in shared)
    diff = newcombe_difference(base_pass, base_n, cand_pass, cand_n, rule.confidence)
    dropped = significant_drop(base_pass, base_n, cand_pass, cand_n, rule.points, rule.confidence)
    regressed = [c.case_id for c in shared if base_by_id[c.case_id].passed and not c.passed]
    left_out = len([c for c in cases if c.case_id in flaky])
    detail = []
    if dropped and regressed:
        detail.append("regressed: " + ", ".join(regressed))
    if left_out:
        detail.append(f"{left_out} flaky cases left out")
    return GateOutcome(
        name,
        "max_regression",
        f"change {diff.estimate * 100:+.1f} points "
        f"[{diff.low * 100:+.1f}, {diff.high * 100:+.1f}] vs {baseline.info.run_id}",
        threshold,
        "unmet" if dropped else "met",
        "; ".join(detail),
    )
