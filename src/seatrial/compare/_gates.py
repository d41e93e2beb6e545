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
from seatrial.i18n import N_, ngettext
from seatrial.i18n import gettext as _
from seatrial.record import failure_type_word, verdict_word

GateVerdict = Literal["met", "unmet", "not_evaluated"]

NO_GATE = N_("no gate configured")
"""The name of the gate a run has when none is written anywhere, in English; a run's
outcomes carry it in the reader's language."""
NO_GATE_RULE = N_("no gate configured: every case must pass")
"""What the reports say when that gate is the run's, in English (as :data:`NO_GATE`)."""
_NAMED = 10
"""Failing cases a gate's detail names before "and N more"."""

_BUDGET_FORMATS = {
    "max_latency_p95_ms": (N_("p95 {value:.0f} ms"), "{value:.0f} ms"),
    "max_tokens": (N_("{value:.0f} tokens"), "{value:.0f}"),
    "max_cost_usd": ("${value:.4f}", "${value:.4f}"),
}
"""How a budget's figure and its limit are shown; a figure with words is marked for
translation (a dollar amount reads the same in every language)."""
_GATE_VERDICTS = {"met": N_("met"), "unmet": N_("UNMET"), "not_evaluated": N_("not evaluated")}
"""How a check's verdict is written in its line."""


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
        text = _("{gate} {check}: {figure}, needs {threshold}: {verdict}").format(
            gate=self.gate,
            check=self.check,
            figure=self.figure,
            threshold=self.threshold,
            verdict=_(_GATE_VERDICTS[self.verdict]),
        )
        return _("{text} ({detail})").format(text=text, detail=self.detail) if self.detail else text


def builtin_outcomes(run: RunData) -> list[GateOutcome]:
    """The gates every run has: P0 cases pass; the suite's ``gate.min_pass_rate``."""
    outcomes = []
    p0 = [c for c in run.cases if c.priority == "P0"]
    failing = [c for c in p0 if c.verdict in ("FAIL", "ERROR")]
    if p0:
        detail = ", ".join(
            f"{c.case_id} {verdict_word(c.verdict)}"
            + (_failure_types(c.failure_types) if any(c.failure_types) else "")
            for c in failing
        )
        outcomes.append(
            GateOutcome(
                "P0",
                "p0_cases",
                _("{passing} of {total} P0 cases pass").format(
                    passing=len(p0) - len(failing), total=len(p0)
                ),
                _("every P0 case passes"),
                "unmet" if failing else "met",
                detail,
            )
        )
    minimum = run.info.settings.gate.get("min_pass_rate")
    if minimum is not None:
        outcomes.append(_min_pass_rate("suite", list(run.cases), float(minimum)))
    if not run.cases:
        outcomes.append(GateOutcome("run", "attempts", _("0 attempts"), _("at least one"), "unmet"))
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
    figure = _("{passing} of {total} cases pass ({passes}/{attempts} attempts PASS)").format(
        passing=len(run.cases) - len(failing),
        total=len(run.cases),
        passes=passes,
        attempts=attempts,
    )
    if failing:
        named = [_failing_case(c) for c in failing[:_NAMED]]
        more = len(failing) - len(named)
        detail = ", ".join(named) + (_(" and {more} more").format(more=more) if more else "")
        verdict: GateVerdict = "unmet"
    elif passes == 0:
        detail = _("no attempt passed ({warned} WARNING): nothing was shown to work").format(
            warned=warned
        )
        verdict = "unmet"
    else:
        detail = (
            ngettext(
                "{warned} WARNING attempt to review (not failures)",
                "{warned} WARNING attempts to review (not failures)",
                warned,
            ).format(warned=warned)
            if warned
            else ""
        )
        verdict = "met"
    return GateOutcome(_(NO_GATE), "every_case", figure, _("every case passes"), verdict, detail)


def _failing_case(case: CaseOutcome) -> str:
    """``b FAIL 2 of 3 (loop)``: the case, its failed attempts and their failure types."""
    failed = [v for v in case.verdicts if v in ("FAIL", "ERROR")]
    text = f"{case.case_id} {verdict_word('FAIL' if 'FAIL' in failed else 'ERROR')}"
    if case.n > 1:
        text += _(" {failed} of {attempts}").format(failed=len(failed), attempts=case.n)
    pairs = zip(case.verdicts, case.failure_types, strict=True)
    types = [t for v, t in pairs if t and v in ("FAIL", "ERROR")]
    return text + (_failure_types(types) if types else "")


def _failure_types(types: Iterable[str | None]) -> str:
    """`` (loop, timeout)``: the failure types after a case's verdict, sorted, each once."""
    words = ", ".join(failure_type_word(t) for t in sorted({t for t in types if t}))
    return _(" ({failure_types})").format(failure_types=words)


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
                    _("no case selected"),
                    _("at least one case"),
                    "not_evaluated",
                    _("no case of this run matches the gate's category/priority/tag"),
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
                    ngettext("{count} attempt", "{count} attempts", count).format(count=count),
                    _("at most {most}").format(most=most),
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
                        _(shown[0]).format(value=value),
                        _("at most {most}").format(most=shown[1].format(value=limit)),
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
        _("{interval} ({passes}/{attempts} attempts)").format(
            interval=interval.format(), passes=passes, attempts=n
        ),
        _("at least {minimum:.1%}").format(minimum=minimum),
        "unmet" if interval.estimate < minimum else "met",
    )


def _pass_hat_k(name: str, cases: list[CaseOutcome], k: int, minimum: float) -> GateOutcome:
    counts = [(c.n, c.passes) for c in cases if c.n >= k]
    threshold = _("at least {minimum:.2f}").format(minimum=minimum)
    if not counts:
        most = max(c.n for c in cases)
        return GateOutcome(
            name,
            f"min_pass_hat_k (k={k})",
            _("cases have at most {most} repeats").format(most=most),
            threshold,
            "not_evaluated",
            _("pass^{k} needs cases with {k} or more repeats: run with --repeats {k}").format(k=k),
        )
    value = mean_pass_hat_k(counts, k)
    skipped = len(cases) - len(counts)
    return GateOutcome(
        name,
        f"min_pass_hat_k (k={k})",
        _("pass^{k} {value:.3f} over {cases} cases").format(k=k, value=value, cases=len(counts)),
        threshold,
        "unmet" if value < minimum else "met",
        ngettext(
            "{skipped} case with fewer than {k} repeats left out",
            "{skipped} cases with fewer than {k} repeats left out",
            skipped,
        ).format(skipped=skipped, k=k)
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
    threshold = _("drop of at most {points:g} points at {confidence:.0%} confidence").format(
        points=rule.points, confidence=rule.confidence
    )
    if baseline is None:
        return GateOutcome(
            name,
            "max_regression",
            _("no baseline"),
            threshold,
            "not_evaluated",
            _("give a baseline run (--baseline latest-passing, a run id or a tag)"),
        )
    base_by_id = {c.case_id: c for c in select(baseline.cases, gate)}
    shared = [c for c in cases if c.case_id in base_by_id and c.case_id not in flaky]
    if not shared:
        return GateOutcome(
            name,
            "max_regression",
            _("no case in both runs"),
            threshold,
            "not_evaluated",
            _("the baseline {run_id} shares no non-flaky case with this run").format(
                run_id=baseline.info.run_id
            ),
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
        detail.append(_("regressed: {cases}").format(cases=", ".join(regressed)))
    if left_out:
        detail.append(_("{left_out} flaky cases left out").format(left_out=left_out))
    return GateOutcome(
        name,
        "max_regression",
        _("change {estimate:+.1f} points [{low:+.1f}, {high:+.1f}] vs {run_id}").format(
            estimate=diff.estimate * 100,
            low=diff.low * 100,
            high=diff.high * 100,
            run_id=baseline.info.run_id,
        ),
        threshold,
        "unmet" if dropped else "met",
        "; ".join(detail),
    )
