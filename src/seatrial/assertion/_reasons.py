"""The reasons the evaluator gives for an attempt's verdict, as messages (read in any
language): every assertion passed, the soft score met its threshold, what a result said."""

from __future__ import annotations

from seatrial.i18n import Message, phrased, phrased_plural
from seatrial.record import AssertionResult


def every_one_passed(count: int) -> Message:
    """The reason of an attempt whose ``count`` evaluated assertions all passed."""
    return phrased_plural("its {n} assertion passed", "all {n} assertions passed", count)


def said_by(result: AssertionResult) -> Message | str:
    """What ``result`` said: its message, or its text when it has none (a plugin's)."""
    return result.message if result.message is not None else result.reason


def pass_reason(
    results: list[AssertionResult], soft_score: float | None, threshold: float | None
) -> Message:
    """The reason of a PASS: every evaluated assertion passed, or the soft score met the
    threshold though some soft assertion failed; with how many were not evaluated."""
    if not results:
        return phrased("the case has no assertions")
    evaluated = [r for r in results if r.verdict != "not_evaluated"]
    passed = sum(r.verdict == "pass" for r in evaluated)
    skipped = len(results) - len(evaluated)
    if passed == len(evaluated) or soft_score is None or threshold is None:
        said = every_one_passed(len(evaluated))
    else:
        # Some soft assertion failed, yet the attempt passed: the threshold was met.
        said = phrased_plural(
            "soft score {score:.2f} ≥ threshold {threshold:.2f}; {passed} of {n} assertion passed",
            "soft score {score:.2f} ≥ threshold {threshold:.2f}; {passed} of {n} assertions passed",
            len(evaluated),
            score=soft_score,
            threshold=threshold,
            passed=passed,
        )
    if skipped:
        said = phrased("{reason}; {skipped} not evaluated", reason=said, skipped=skipped)
    return said
