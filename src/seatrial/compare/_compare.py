"""Comparing two stored runs: per-case transitions, deltas with intervals, metric shifts.

Cases are matched by id. A case flaky in either run (its repeats disagree, or its verdict
changed across recent runs of the same agent version) is listed as ``flaky`` and kept out of
the pass-rate deltas and McNemar's test (its verdict changes by chance, not because of the
change under test); its failures still count in gates.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from seatrial.compare._flaky import flaky_cases
from seatrial.compare._runs import CaseOutcome, RunData, load_run
from seatrial.compare._stats import (
    Interval,
    Paired,
    latency_summary,
    newcombe_difference,
    paired_outcomes,
    wilson_interval,
)
from seatrial.i18n import N_
from seatrial.record import Verdict
from seatrial.store import Store

Transition = Literal[
    "regressed", "fixed", "still_failing", "still_passing", "new", "removed", "flaky"
]
TRANSITIONS: tuple[Transition, ...] = (
    "regressed",
    "fixed",
    "still_failing",
    "new",
    "removed",
    "flaky",
    "still_passing",
)
"""Transitions in the order reports list them: what needs attention first."""


@dataclass(frozen=True)
class CaseChange:
    """What happened to one case between the two runs."""

    case_id: str
    category: str
    transition: Transition
    base_verdict: Verdict | None
    cand_verdict: Verdict | None
    base_passes: str
    """``passes/attempts`` in the base run, ``-`` when absent."""
    cand_passes: str
    base_failures: tuple[str, ...]
    cand_failures: tuple[str, ...]
    flaky: str = ""
    """Why the case is flaky, for ``flaky``."""


@dataclass(frozen=True)
class GroupDelta:
    """Pass rates of a group of cases (a category, or all) in both runs and their change."""

    name: str
    cases: int
    """Non-flaky cases present in both runs (what the figures count)."""
    base: Interval
    cand: Interval
    change: Interval
    """Candidate minus base, Newcombe interval."""
    paired: Paired
    """Case-level pass/fail pairs, with McNemar's exact p-value."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "name": self.name,
            "cases": self.cases,
            "base": self.base.as_dict(),
            "candidate": self.cand.as_dict(),
            "change": self.change.as_dict(),
            "paired": {
                "both_pass": self.paired.both_pass,
                "base_only": self.paired.base_only,
                "candidate_only": self.paired.cand_only,
                "both_fail": self.paired.both_fail,
                "mcnemar_p": self.paired.p_value,
            },
        }


@dataclass(frozen=True)
class MetricDelta:
    """One per-attempt figure (mean or percentile) in both runs."""

    name: str
    base: float | None
    cand: float | None

    @property
    def change(self) -> float | None:
        """Candidate minus base."""
        if self.base is None or self.cand is None:
            return None
        return self.cand - self.base


@dataclass(frozen=True)
class Comparison:
    """Everything ``seatrial compare`` shows."""

    base: RunData
    cand: RunData
    cases: list[CaseChange]
    overall: GroupDelta
    categories: list[GroupDelta]
    metrics: list[MetricDelta]
    failure_types: dict[str, tuple[int, int]]
    """failure type -> (attempts in base, attempts in candidate)."""
    flaky: dict[str, str] = field(default_factory=dict)

    def of(self, transition: Transition) -> list[CaseChange]:
        """The cases with this transition, in suite order."""
        return [c for c in self.cases if c.transition == transition]

    def to_dict(self) -> dict[str, Any]:
        """JSON for tools and the dashboard."""
        return {
            "base": _run_header(self.base),
            "candidate": _run_header(self.cand),
            "transitions": {
                t: [c.case_id for c in self.cases if c.transition == t] for t in TRANSITIONS
            },
            "cases": [
                {
                    "case_id": c.case_id,
                    "category": c.category,
                    "transition": c.transition,
                    "base": {
                        "verdict": c.base_verdict,
                        "passes": c.base_passes,
                        "failure_types": list(c.base_failures),
                    },
                    "candidate": {
                        "verdict": c.cand_verdict,
                        "passes": c.cand_passes,
                        "failure_types": list(c.cand_failures),
                    },
                    "flaky": c.flaky,
                }
                for c in self.cases
            ],
            "overall": self.overall.as_dict(),
            "categories": [g.as_dict() for g in self.categories],
            "metrics": [
                {"name": m.name, "base": m.base, "candidate": m.cand, "change": m.change}
                for m in self.metrics
            ],
            "failure_types": {
                name: {"base": base, "candidate": cand}
                for name, (base, cand) in self.failure_types.items()
            },
            "flaky": self.flaky,
        }


def _run_header(run: RunData) -> dict[str, Any]:
    info = run.info
    return {
        "run_id": info.run_id,
        "suite": info.suite,
        "agent": info.agent,
        "tags": info.tags,
        "started_at": info.started_at,
        "cases": len(run.cases),
        "attempts": sum(c.n for c in run.cases),
    }


def compare_runs(store: Store, base_id: str, cand_id: str) -> Comparison:
    """Compare two stored runs (ids as stored; see ``resolve_run_ref`` for names)."""
    base = load_run(store, base_id)
    cand = load_run(store, cand_id)
    flaky = {**flaky_cases(store, base), **flaky_cases(store, cand)}
    return compare(base, cand, flaky)


def compare(base: RunData, cand: RunData, flaky: dict[str, str] | None = None) -> Comparison:
    """Compare two loaded runs; ``flaky`` (case id -> why) defaults to their mixed repeats."""
    if flaky is None:
        flaky = {
            c.case_id: f"{c.passes} of {c.n} repeats passed"
            for r in (base, cand)
            for c in r.cases
            if c.mixed
        }
    changes = [_change(c.case_id, base.case(c.case_id), c, flaky) for c in cand.cases]
    changes += [
        _change(c.case_id, c, None, flaky) for c in base.cases if cand.case(c.case_id) is None
    ]
    stable = [
        (b, c)
        for c in cand.cases
        if (b := base.case(c.case_id)) is not None and c.case_id not in flaky
    ]
    categories = sorted({c.category for _, c in stable})
    failure_types = _failure_types(base, cand)
    return Comparison(
        base=base,
        cand=cand,
        cases=changes,
        overall=_group("all", stable),
        categories=[
            _group(name, [p for p in stable if p[1].category == name]) for name in categories
        ],
        metrics=_metrics(base, cand),
        failure_types=failure_types,
        flaky={k: v for k, v in flaky.items() if base.case(k) or cand.case(k)},
    )


def _passes(case: CaseOutcome | None) -> str:
    return "-" if case is None else f"{case.passes}/{case.n}"


def _failures(case: CaseOutcome | None) -> tuple[str, ...]:
    if case is None:
        return ()
    return tuple(sorted({t for t in case.failure_types if t}))


def _change(
    case_id: str, base: CaseOutcome | None, cand: CaseOutcome | None, flaky: dict[str, str]
) -> CaseChange:
    transition: Transition
    if base is None:
        transition = "new"
    elif cand is None:
        transition = "removed"
    elif case_id in flaky:
        transition = "flaky"
    elif base.passed and not cand.passed:
        transition = "regressed"
    elif cand.passed and not base.passed:
        transition = "fixed"
    elif cand.passed:
        transition = "still_passing"
    else:
        transition = "still_failing"
    either = cand or base
    assert either is not None
    return CaseChange(
        case_id=case_id,
        category=either.category,
        transition=transition,
        base_verdict=base.verdict if base else None,
        cand_verdict=cand.verdict if cand else None,
        base_passes=_passes(base),
        cand_passes=_passes(cand),
        base_failures=_failures(base),
        cand_failures=_failures(cand),
        flaky=flaky.get(case_id, "") if transition == "flaky" else "",
    )


def _group(name: str, pairs: list[tuple[CaseOutcome, CaseOutcome]]) -> GroupDelta:
    base_pass = sum(b.passes for b, _ in pairs)
    base_n = sum(b.n for b, _ in pairs)
    cand_pass = sum(c.passes for _, c in pairs)
    cand_n = sum(c.n for _, c in pairs)
    return GroupDelta(
        name=name,
        cases=len(pairs),
        base=wilson_interval(base_pass, base_n),
        cand=wilson_interval(cand_pass, cand_n),
        change=newcombe_difference(base_pass, base_n, cand_pass, cand_n),
        paired=paired_outcomes(
            {b.case_id: b.passed for b, _ in pairs}, {c.case_id: c.passed for _, c in pairs}
        ),
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _metrics(base: RunData, cand: RunData) -> list[MetricDelta]:
    def per_attempt(run: RunData, name: str) -> list[float]:
        return [float(v) for c in run.cases for v in getattr(c, name)]

    result = []
    for label, name in (
        (N_("tool calls / attempt"), "tool_calls"),
        (N_("tokens / attempt"), "tokens"),
        (N_("cost USD / attempt"), "cost_usd"),
    ):
        result.append(
            MetricDelta(label, _mean(per_attempt(base, name)), _mean(per_attempt(cand, name)))
        )
    base_latency = latency_summary(per_attempt(base, "wall_time_ms"))
    cand_latency = latency_summary(per_attempt(cand, "wall_time_ms"))
    for label, attribute in ((N_("latency p50 ms"), "p50"), (N_("latency p95 ms"), "p95")):
        result.append(
            MetricDelta(
                label,
                getattr(base_latency, attribute) if base_latency else None,
                getattr(cand_latency, attribute) if cand_latency else None,
            )
        )
    return result


def _failure_types(base: RunData, cand: RunData) -> dict[str, tuple[int, int]]:
    def count(run: RunData) -> Counter[str]:
        return Counter(t for c in run.cases for t in c.failure_types if t)

    before, after = count(base), count(cand)
    names = sorted(set(before) | set(after), key=lambda n: (-(after[n] - before[n]), n))
    return {name: (before[name], after[name]) for name in names}
