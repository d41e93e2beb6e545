"""Whether a run may ship: the one verdict the report, the dashboard, ``latest-passing`` and
the library's run function all use.

A run meets its gates when no check is unmet: the built-in ones (every P0 case passes, the
suite's ``gate.min_pass_rate``) and the gates it stored when it started, the regression gates
against the baseline it stored. With no gate written anywhere the gate is "every case passes"
(:func:`seatrial.compare.every_case_passes`): a failing case never meets a run's gates
silently. A check that cannot be evaluated (no baseline, too few repeats) does not block.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from seatrial.compare._flaky import flaky_cases
from seatrial.compare._gate_source import gates_written, stored_baseline_id, stored_gates
from seatrial.compare._gates import (
    NO_GATE_RULE,
    GateOutcome,
    builtin_outcomes,
    evaluate_gates,
    every_case_passes,
)
from seatrial.compare._runs import RunData, load_run
from seatrial.errors import RunNotFound
from seatrial.i18n import gettext as _
from seatrial.store import Store


class GateResult(BaseModel):
    """Whether the run may ship: every P0 case passes and every gate is met."""

    passed: bool
    """True when no gate is unmet (a check that could not be evaluated does not block)."""
    reasons: list[str] = Field(default_factory=list)
    """Each gate that did not hold, with its figure."""
    outcomes: list[GateOutcome] = Field(default_factory=list)
    """Every check of every gate, with its figure and verdict."""
    changed: str | None = None
    """Set when the gates' source changed after the run started (shown in red); filled by
    whoever can read that source (:func:`seatrial.compare.gates_changed`), never here."""
    baseline: str | None = None
    """The baseline run the regression gates compared against."""
    rule: str | None = None
    """``no gate configured: every case must pass`` (in the reader's language) when no gate
    was written anywhere and that is the run's gate; None when written gates apply (they
    replace it)."""


def run_meets_gates(
    run: RunData,
    baseline: RunData | None = None,
    *,
    flaky: Iterable[str] | None = None,
    store: Store | None = None,
) -> GateResult:
    """The run's verdict over its built-in gates and the gates it stored when it started; with
    none written anywhere (no gates file, suite or seatrial.yaml ``gates:``, tier gates or
    ``gate: {min_pass_rate}``), over "every case passes" instead.

    Args:
        run: the run, as stored.
        baseline: the run its ``max_regression`` gates compare with (the one it stored:
            :func:`stored_baseline`); None leaves them not evaluated, which does not block.
        flaky: case ids kept out of the regression delta; None works them out when a
            regression gate has a baseline to compare with, from the run's recent history in
            ``store`` (its own repeats alone without one).
        store: where the run's history is read, for ``flaky``; nothing else is read.
    """
    gates = stored_gates(run.info.settings)
    if flaky is None:
        compared = baseline is not None and any(g.max_regression is not None for g in gates)
        # Flaky cases change only the regression delta: skip reading history when no
        # regression gate is evaluated.
        flaky = flaky_cases(store, run) if compared else ()
    outcomes = builtin_outcomes(run) + evaluate_gates(run, gates, baseline, flaky)
    implicit = not gates_written(run.info.settings)
    if implicit:
        outcome = every_case_passes(run)
        outcomes += [outcome] if outcome is not None else []
    reasons = [o.line() for o in outcomes if o.verdict == "unmet"]
    return GateResult(
        passed=not reasons,
        reasons=reasons,
        outcomes=outcomes,
        baseline=baseline.info.run_id if baseline is not None else None,
        rule=_(NO_GATE_RULE) if implicit else None,
    )


def stored_baseline(store: Store | None, run: RunData) -> RunData | None:
    """The baseline run ``run`` stored when it started, read from ``store``; None when it has
    none or it is no longer stored."""
    run_id = stored_baseline_id(run.info.settings)
    if store is None or run_id is None:
        return None
    try:
        return load_run(store, run_id)
    except RunNotFound:
        return None
