"""Scoring an attempt when checks may wait (an LLM judge): the same rules as ``evaluate``.

L1 and L2 run first, in order; only when none of their hard constraints failed are the L3
checks started, all at once (each judge call waits on the network, none on another).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from seatrial.assertion._evaluate import (
    Evaluation,
    Planned,
    broken,
    decide,
    not_a_check,
    outcome,
    plan,
    skip_l3,
)
from seatrial.assertion._registry import AssertionContext, Check, ReviewRequest
from seatrial.case import Case
from seatrial.record import AssertionResult


async def call_async(planned: Planned, ctx: AssertionContext) -> Check:
    """Run one check, awaiting it when it is asynchronous; errors become not evaluated."""
    try:
        check = planned.type.check(planned.params, ctx)
        if not isinstance(check, Check):
            if not inspect.isawaitable(check):
                raise not_a_check(check)
            check = await check
            if not isinstance(check, Check):
                raise not_a_check(check)
    except Exception as exc:  # one broken assertion (or judge) must not crash the run
        return broken(exc)
    return check


async def evaluate_async(
    case: Case, ctx: AssertionContext, planned: Sequence[Planned] | None = None
) -> Evaluation:
    """Like :func:`seatrial.assertion.evaluate`, awaiting asynchronous checks (the judge);
    ``planned`` as there.

    L3 is not started at all after a hard L1/L2 failure: no judge call is spent on it.
    """
    if planned is None:
        planned = plan(case)
    advisory: list[AssertionResult] = []
    reviews: list[ReviewRequest] = []
    results = [
        outcome(p, await call_async(p, ctx), advisory, reviews) for p in planned if p.level != "L3"
    ]
    skipped = skip_l3(planned, results)
    if skipped is not None:
        return skipped
    # Imported here: asyncio (with ssl) is already loaded wherever this runs, and `seatrial
    # validate`, which imports this package for the assertion types, never awaits.
    import asyncio

    l3 = [p for p in planned if p.level == "L3"]
    checks = await asyncio.gather(*(call_async(p, ctx) for p in l3))
    results += [outcome(p, check, advisory, reviews) for p, check in zip(l3, checks, strict=True)]
    reviews += disagreements(case, ctx, results, reviews)
    return decide(case, results, advisory, reviews)


JUDGE_TYPES = frozenset({"llm_judge"})
"""Types whose verdict is the judge's (``semantic`` and ``llm_rubric`` are aliases)."""


def disagreements(
    case: Case,
    ctx: AssertionContext,
    results: list[AssertionResult],
    queued: list[ReviewRequest],
) -> list[ReviewRequest]:
    """Review requests for judge verdicts that the rule-based checks of the reply contradict.

    A judge PASS while a soft L2 rule or ``similar`` failed on the same reply, or a judge FAIL
    while every such check (at least one) passed: a person should say which is right, and the
    label is calibration data either way. Hard L1/L2 failures never get here (L3 is skipped).
    """
    rules = [
        r
        for r in results
        if r.type not in JUDGE_TYPES
        and (r.level == "L2" or r.type == "similar")
        and r.verdict in ("pass", "fail")
    ]
    if not rules:
        return []
    already = {request.assertion_id for request in queued}
    found = []
    for result in results:
        if result.type not in JUDGE_TYPES or result.verdict not in ("pass", "fail"):
            continue
        if result.id in already:
            continue
        judge_passed = result.verdict == "pass"
        rules_passed = all(r.verdict == "pass" for r in rules)
        if judge_passed == rules_passed:
            continue
        failed = next((r for r in rules if r.verdict == "fail"), None)
        found.append(
            ReviewRequest(
                assertion_id=result.id,
                why="disagreement",
                judge_verdict="PASS" if judge_passed else "FAIL",
                judge_reason=result.reason
                + (f" (but {failed.id}: {failed.reason})" if failed is not None else ""),
                input="\n".join(case.user_turns),
                output=ctx.response,
                category=case.category,
            )
        )
    return found
