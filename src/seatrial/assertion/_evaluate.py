"""Scoring an attempt: run the assertions layer by layer and decide PASS, FAIL or WARNING.

The rules: hard constraints are never offset by a score; once one fails, L3 is not spent;
an assertion that could not be evaluated never counts as passed.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from seatrial.assertion._reasons import every_one_passed, pass_reason, said_by
from seatrial.assertion._registry import (
    AssertionContext,
    AssertionParams,
    AssertionType,
    Check,
    ReviewRequest,
)
from seatrial.case import Case, check_assertion
from seatrial.errors import Problem, SuiteError
from seatrial.i18n import Message, english, phrased, phrased_plural
from seatrial.i18n import gettext as _
from seatrial.record import AssertionResult, Level
from seatrial.trace import trusted_model

SKIPPED = phrased("skipped: a hard constraint failed")
NEEDS_ASYNC = phrased(
    "not evaluated: this check is asynchronous (an LLM judge); it runs when the runner has a "
    "judge configured (see docs/judge.md)"
)


class Evaluation(BaseModel):
    """The verdict on one attempt, with every assertion's result."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["PASS", "FAIL", "WARNING"]
    """PASS, FAIL, or WARNING (a hard assertion, or every assertion, could not be
    evaluated)."""
    failure_type: str | None = None
    """For FAIL, the deciding assertion's failure type."""
    reason: str = ""
    """One line: ``<id>: <reason>`` of the deciding assertion, or a summary (in English)."""
    score: float | None = None
    """Weighted mean over every evaluated assertion (pass 1, fail 0, graded as graded); None
    when nothing was evaluated."""
    results: list[AssertionResult] = Field(default_factory=list)
    """Every assertion's result, in evaluation order."""
    review_items: list[ReviewRequest] = Field(default_factory=list)
    """Review-queue entries the assertions asked for (an unsure or advisory judge)."""
    message: Message | None = None
    """The reason as a message id and its parameters, to read in any language."""


@dataclass(frozen=True)
class Planned:
    """One assertion ready to run: its type, validated parameters and common keys."""

    id: str
    type: AssertionType
    params: AssertionParams
    level: Level
    must_pass: bool
    weight: float


def _automatic(case: Case) -> list[tuple[str, dict[str, Any]]]:
    """Assertions implied by a case's regression-sample fields, as (type, params).

    A regression sample states its forbidden events, limits, allowed tools or permissions and
    expected files as plain fields; each becomes its L1 check without an assertion written.
    """
    implied: list[tuple[str, dict[str, Any]]] = []
    if case.forbidden_events:
        implied.append(("forbidden_events", {"expected": list(case.forbidden_events)}))
    if case.limits is not None:
        limits = case.limits.model_dump(exclude_none=True)
        if limits:
            implied.append(("limits", limits))
    if case.permissions or case.allowed_tools is not None:
        implied.append(("permissions_respected", {}))
    if case.expected_files:
        implied.append(("expected_files", {"expected": list(case.expected_files)}))
    return implied


def _checked(
    name: str, raw: dict[str, Any], where: str, problems: list[Problem]
) -> tuple[AssertionType, AssertionParams] | None:
    """The type and parameters of one assertion, or None with its problems noted.

    The messages are the suite loader's own; ``where`` takes the place of its file and line.
    """
    checked = check_assertion(name, raw)
    problems.extend(Problem(where, None, message, fix) for _loc, message, fix in checked.problems)
    if checked.kind is None or checked.params is None:
        return None
    return checked.kind, checked.params


def plan(case: Case) -> tuple[Planned, ...]:
    """The case's assertions in evaluation order: L1 written, L1 implied, L2, then L3.

    Raises :class:`SuiteError` naming every unknown type and invalid parameter.
    """
    problems: list[Problem] = []
    written: list[tuple[str, AssertionType, AssertionParams, Level, bool | None, float]] = []
    for number, spec in enumerate(case.assertions, start=1):
        where = _("case `{id}`, assertion {number}").format(id=case.id, number=number)
        found = _checked(spec.type, spec.params, where, problems)
        if found is not None:
            kind, params = found
            level = spec.level or kind.level
            written.append((spec.id or spec.type, kind, params, level, spec.must_pass, spec.weight))
    implied = []
    written_types = {kind.name for _, kind, *_ in written}
    for name, raw in _automatic(case):
        if name not in written_types:
            where = _("case `{id}`, the `{check}` check its fields imply").format(
                id=case.id, check=name
            )
            found = _checked(name, raw, where, problems)
            if found is not None:
                kind, params = found
                implied.append((name, kind, params, kind.level, None, 1.0))
    if problems:
        raise SuiteError(problems)
    ordered = (
        [entry for entry in written if entry[3] == "L1"]
        + implied
        + [entry for entry in written if entry[3] == "L2"]
        + [entry for entry in written if entry[3] == "L3"]
    )
    seen: Counter[str] = Counter()
    planned = []
    for base, kind, params, level, must_pass, weight in ordered:
        seen[base] += 1
        planned.append(
            Planned(
                id=base if seen[base] == 1 else f"{base}#{seen[base]}",
                type=kind,
                params=params,
                level=level,
                must_pass=must_pass if must_pass is not None else level != "L3",
                weight=weight,
            )
        )
    return tuple(planned)


_VERDICTS = frozenset(("pass", "fail", "not_evaluated"))


def _result(planned: Planned, check: Check) -> AssertionResult:
    verdict = check.verdict
    reason = check.reason
    score = check.score
    failure_type = (check.failure_type or planned.type.failure_type) if verdict == "fail" else None
    # A result is made for every assertion of every attempt: skip pydantic's validation when
    # the check's values have their fields' types (the built-in checks' always do); anything
    # else a plugin returned is validated (and coerced, or refused) as before.
    trusted = (
        verdict in _VERDICTS
        and type(reason) is str
        and (score is None or type(score) is float)
        and (failure_type is None or type(failure_type) is str)
        and (check.message is None or type(check.message) is dict)
        and (check.span_id is None or type(check.span_id) is str)
    )
    fields: dict[str, Any] = {
        "id": planned.id,
        "level": planned.level,
        "type": planned.type.name,
        "verdict": verdict,
        "reason": reason,
        "failure_type": failure_type,
        "must_pass": planned.must_pass,
        "weight": planned.weight,
        "score": score,
        "message": check.message,
        "span_id": check.span_id,
    }
    if trusted:
        return trusted_model(AssertionResult, fields)
    return AssertionResult.model_validate(fields)


def broken(exc: Exception) -> Check:
    """The check raised: not evaluated, with the error (one broken assertion must not crash)."""
    return Check.not_evaluated(
        phrased("could not be evaluated: {kind}: {error}", kind=type(exc).__name__, error=str(exc))
    )


def not_a_check(value: object) -> TypeError:
    """The error for a check function that returned something else."""
    return TypeError(f"the check returned {type(value).__name__}, not a Check")


def call(planned: Planned, ctx: AssertionContext) -> Check:
    """Run one check synchronously; an async check is closed unawaited and not evaluated."""
    try:
        check = planned.type.check(planned.params, ctx)
        if type(check) is not Check and not isinstance(check, Check):
            if inspect.isawaitable(check):
                if inspect.iscoroutine(check):
                    check.close()  # never awaited: close it, or Python warns
                return Check.not_evaluated(NEEDS_ASYNC)
            raise not_a_check(check)
    except Exception as exc:  # one broken assertion must not crash the run
        check = broken(exc)
    return check


def outcome(
    planned: Planned, check: Check, advisory: list[AssertionResult], reviews: list[ReviewRequest]
) -> AssertionResult:
    """The check's result; an advisory one and its review request are noted on the side."""
    result = _result(planned, check)
    if check.advisory:
        advisory.append(result)
    if check.review is not None:
        reviews.append(check.review.model_copy(update={"assertion_id": planned.id}))
    return result


def weighted_score(results: list[AssertionResult]) -> float | None:
    """Weighted mean of the evaluated results (graded score, else pass 1 / fail 0)."""
    total = weight = 0.0
    for result in results:
        # Read from the model's dict: a pydantic model's attributes go through its
        # __getattr__ hook, several times the cost, and this runs for every attempt.
        fields = result.__dict__
        verdict = fields["verdict"]
        if verdict == "not_evaluated":
            continue
        score = fields["score"]
        value = score if score is not None else float(verdict == "pass")
        total += value * fields["weight"]
        weight += fields["weight"]
    return total / weight if weight > 0 else None


def _all_passed(results: list[AssertionResult]) -> bool:
    """Whether every result passed (read as :func:`weighted_score` reads them)."""
    return all(result.__dict__["verdict"] == "pass" for result in results)


def _hard_failures(results: list[AssertionResult]) -> list[AssertionResult]:
    """The failed results of hard constraints, in order."""
    return [
        result
        for result in results
        if (fields := result.__dict__)["verdict"] == "fail" and fields["must_pass"]
    ]


def _fail(
    decider: AssertionResult, results: list[AssertionResult], before: Message | None = None
) -> Evaluation:
    said = phrased("{id}: {reason}", id=decider.id, reason=said_by(decider))
    # The English of the deciding result is already rendered: said again, not rendered again.
    text = f"{decider.id}: {decider.reason}"
    if before is not None:
        said = phrased("{before}; {reason}", before=before, reason=said)
        text = f"{english(before)}; {text}"
    return _evaluation(
        verdict="FAIL",
        failure_type=decider.failure_type,
        reason=text,
        score=weighted_score(results),
        results=results,
        message=said,
    )


def evaluate(
    case: Case, ctx: AssertionContext, planned: Sequence[Planned] | None = None
) -> Evaluation:
    """Run the case's assertions on what the agent did and decide the verdict.

    ``planned`` is the case's :func:`plan`, when the caller made it once for many attempts
    (the runner's ``CasePlan``); without it the case is planned here.

    Raises :class:`SuiteError` when the case names an unknown type or invalid parameters
    (loading a suite reports these earlier).
    """
    if planned is None:
        planned = plan(case)
    results = [_result(p, call(p, ctx)) for p in planned if p.level != "L3"]
    if len(results) == len(planned):
        # No L3 assertion to spend or skip: decide() reaches the verdict skip_l3 would.
        return decide(case, results, [], [])
    skipped = skip_l3(planned, results)
    if skipped is not None:
        return skipped
    advisory: list[AssertionResult] = []
    reviews: list[ReviewRequest] = []
    for p in planned:
        if p.level == "L3":
            results.append(outcome(p, call(p, ctx), advisory, reviews))
    return decide(case, results, advisory, reviews)


def skip_l3(planned: Sequence[Planned], results: list[AssertionResult]) -> Evaluation | None:
    """FAIL without spending L3 when an L1/L2 hard constraint failed, else None."""
    hard_failures = _hard_failures(results)
    if not hard_failures:
        return None
    results += [_result(p, Check.not_evaluated(SKIPPED)) for p in planned if p.level == "L3"]
    return _fail(hard_failures[0], results)


def decide(
    case: Case,
    results: list[AssertionResult],
    advisory: list[AssertionResult],
    reviews: list[ReviewRequest],
) -> Evaluation:
    """The verdict once every layer ran: hard FAIL, soft FAIL, WARNING, else PASS."""
    evaluation = _decide(case, results, advisory)
    if reviews:
        return evaluation.model_copy(update={"review_items": reviews})
    return evaluation


def _decide(
    case: Case, results: list[AssertionResult], advisory: list[AssertionResult]
) -> Evaluation:
    if results and case.threshold is None and _all_passed(results):
        # The usual attempt: every assertion passed and no threshold weighs them (what the
        # rules below conclude too, in one pass instead of five).
        said = every_one_passed(len(results))
        return _evaluation(
            verdict="PASS",
            failure_type=None,
            reason=english(said),
            score=weighted_score(results),
            results=results,
            review_items=[],
            message=said,
        )
    hard_failures = _hard_failures(results)
    if hard_failures:
        return _fail(hard_failures[0], results)

    soft = [r for r in results if not r.must_pass]
    soft_score = weighted_score(soft)
    failing_soft = [r for r in soft if r.verdict == "fail"]
    threshold = case.threshold
    if threshold is not None and soft:
        if soft_score is None:
            return _said(
                "WARNING",
                phrased_plural(
                    "threshold {threshold:.2f} could not be checked: its {n} soft assertion was "
                    "not evaluated ({id}: {reason})",
                    "threshold {threshold:.2f} could not be checked: none of the {n} soft "
                    "assertions was evaluated ({id}: {reason})",
                    len(soft),
                    threshold=threshold,
                    id=soft[0].id,
                    reason=said_by(soft[0]),
                ),
                results,
            )
        if soft_score < threshold:
            graded = [r for r in soft if r.verdict != "not_evaluated"]
            decider = failing_soft[0] if failing_soft else min(graded, key=_value)
            below = phrased(
                "soft score {score:.2f} < threshold {threshold:.2f}",
                score=soft_score,
                threshold=threshold,
            )
            return _fail(decider, results, below)
    elif failing_soft:
        return _fail(failing_soft[0], results)

    # A soft assertion left unevaluated beside evaluated ones only weighs in the score; when
    # nothing at all was evaluated, a PASS would rest on no evidence: WARNING.
    nothing_evaluated = all(r.verdict == "not_evaluated" for r in results)
    unevaluated = [
        r
        for r in results
        if r.verdict == "not_evaluated"
        and (nothing_evaluated or r.must_pass or any(r is a for a in advisory))
    ]
    if unevaluated:
        first = unevaluated[0]
        if any(first is a for a in advisory):
            said = phrased("{id}: {reason}", id=first.id, reason=said_by(first))
        else:
            said = phrased("{id} was not evaluated: {reason}", id=first.id, reason=said_by(first))
        if len(unevaluated) > 1:
            said = phrased("{reason} (and {more} more)", reason=said, more=len(unevaluated) - 1)
        return _said("WARNING", said, results)
    return _said("PASS", pass_reason(results, soft_score, threshold), results)


def _said(
    verdict: Literal["PASS", "WARNING"], said: Message, results: list[AssertionResult]
) -> Evaluation:
    return _evaluation(
        verdict=verdict,
        reason=english(said),
        score=weighted_score(results),
        results=results,
        message=said,
    )


def _evaluation(**fields: Any) -> Evaluation:
    # Every value is the evaluator's own (verdicts, reasons, scores it computed): no need to
    # validate them again for every attempt. (Given all six fields in order, as the usual
    # PASS gives them, trusted_model has no defaults to fill in.)
    return trusted_model(Evaluation, fields)


def _value(result: AssertionResult) -> float:
    return result.score if result.score is not None else float(result.verdict == "pass")
