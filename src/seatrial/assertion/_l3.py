"""L3 semantic assertions: embedding similarity, the LLM judge, factuality.

``similar`` embeds with the bundled model, or with the multilingual one when a text holds CJK
characters, unless the case names another. The LLM judge and factuality need a judge (a
``seatrial.judge.JudgeHandle``, handed over as ``AssertionContext.judge``); without one they
are recorded as not evaluated, which never counts as passed.

A judge's FAIL fails the attempt only when its calibration says it may (judge trust); otherwise,
and whenever the judge is unsure, the attempt gets WARNING and a review-queue entry.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from seatrial.assertion._common import Target, replies, short
from seatrial.assertion._registry import (
    AssertionContext,
    AssertionParams,
    Check,
    ReviewRequest,
    ReviewWhy,
    assertion,
)
from seatrial.case import Case
from seatrial.errors import GatewayError, SeatrialError
from seatrial.i18n import Message, english, phrased, phrased_plural
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    # Annotations only: the judge package loads when a judge is set up, not with the registry.
    from seatrial.judge import JudgeHandle, JudgeInput, JudgeVerdict

NO_JUDGE = phrased(
    "no LLM judge is configured; L3 assertions are evaluated once a judge is set up "
    "(see docs/judge.md)"
)


NO_CRITERIA = "The reply does what the user asked, correctly and without inventing facts."
"""What the judge checks when an ``llm_judge`` names neither criteria nor a rubric."""


def user_turns(case: Case) -> list[str]:
    """What the user said, turn by turn."""
    if case.turns:
        return [turn.content for turn in case.turns]
    return [case.input] if case.input else []


def trace_summary(ctx: AssertionContext) -> str:
    """The tools the agent called, with arguments and results, one line each."""
    lines = []
    for call in ctx.tool_calls():
        line = f"{call.name}({short(call.arguments, 300)}) -> {short(call.result, 300)}"
        if not call.success:
            line += f" [failed: {call.error_type or 'error'}]"
        lines.append(line)
    return "\n".join(lines)


def judged_text(ctx: AssertionContext, target: Target) -> str:
    """The reply the judge reads: the final one, or every reply numbered."""
    texts = replies(ctx, target)
    if len(texts) == 1:
        return texts[0]
    return "\n".join(f"[reply {n}] {text}" for n, text in enumerate(texts, start=1))


def _review(why: ReviewWhy, verdict: JudgeVerdict, item: JudgeInput) -> ReviewRequest:
    return ReviewRequest(
        why=why,
        judge_verdict=verdict.verdict,
        judge_reason=verdict.reason,
        confidence=verdict.confidence,
        input="\n".join(item.turns),
        output=item.reply,
        category=item.category,
    )


def judge_score(verdict: JudgeVerdict) -> float:
    """0..1: the mean rubric dimension score, else the confidence that the reply passes."""
    if verdict.dimension_scores:
        return sum(verdict.dimension_scores.values()) / len(verdict.dimension_scores)
    return verdict.confidence if verdict.verdict == "PASS" else 1.0 - verdict.confidence


def conclude(
    verdict: JudgeVerdict, item: JudgeInput, handle: JudgeHandle, threshold: float | None
) -> Check:
    """Turn the judge's answer into a Check: pass, gated fail, or WARNING for a person."""
    score = judge_score(verdict) if threshold is not None else None
    # The judge's reason is its own words: a parameter, never translated.
    said = phrased(
        "judge {model} (prompt {prompt}) said {verdict} with confidence {confidence}: {reason}",
        model=verdict.model,
        prompt=verdict.prompt_version,
        verdict=verdict.verdict,
        confidence=format(verdict.confidence, ".2f"),
        reason=verdict.reason,
    )
    if verdict.verdict == "WARNING":
        return Check.warning(
            phrased("{said}; a person decides (review queue)", said=said),
            score=score,
            review=_review("warning", verdict, item),
        )
    floor = handle.confidence_floor
    if verdict.confidence < floor:
        return Check.warning(
            phrased(
                "{said}; under the confidence floor {floor}, a person decides (review queue)",
                said=said,
                floor=format(floor, "g"),
            ),
            score=score,
            review=_review("low_confidence", verdict, item),
        )
    if threshold is not None and score is not None:
        passed = score >= threshold
        said = phrased(
            "{said} (score {score}, threshold {threshold})",
            said=said,
            score=format(score, ".2f"),
            threshold=format(threshold, "g"),
        )
    else:
        passed = verdict.verdict == "PASS"
    if passed:
        return Check.passed(said, score=score)
    advisory = handle.advisory()
    if advisory is None:
        return Check.failed(said, verdict.failure_type, score=score)
    return Check.warning(
        _advisory(said, advisory), score=score, review=_review("warning", verdict, item)
    )


def _advisory(said: Message, advisory: str) -> Message:
    """A FAIL the judge's calibration does not let count, and why (the judge's own words)."""
    return phrased("advisory FAIL: {said}; {advisory}", said=said, advisory=advisory)


class SimilarParams(AssertionParams):
    """Parameters of ``similar``."""

    value: str | list[str] = Field(min_length=1)
    """The reference answer the reply should mean the same as; with a list (promptfoo's
    form), the reply must be close enough to any one of them."""
    threshold: float = Field(default=0.75, ge=0, le=1)
    """Lowest cosine similarity that passes. Unset, the model's own default: promptfoo's 0.75
    for the English models, measured ones for the multilingual model (docs/judge.md)."""
    target: Target = "final_response"
    """``final_response``, or ``all_responses`` (the reply most similar to ``value`` counts)."""
    model: str | None = Field(default=None, min_length=1)
    """Embeddings model: unset for the bundled static model, or ``multilingual-e5-small`` when
    the reply or the expected text holds CJK characters; ``all-MiniLM-L6-v2`` with the
    ``seatrial[semantic]`` extra, or a gateway model configured with ``embedding: true``."""


@assertion("similar", level="L3", params=SimilarParams, failure_type="semantic_mismatch")
def similar(params: SimilarParams, ctx: AssertionContext) -> Check:
    """The reply's embedding is at least ``threshold`` similar to ``value``'s (cosine)."""
    # Imported on first use: loading the assertion registry should not load numpy and models.
    from seatrial.judge import default_model, default_threshold, similarities

    texts = replies(ctx, params.target)
    references = [params.value] if isinstance(params.value, str) else params.value
    # One model for every text of the check, so that the scores compare.
    model = params.model or default_model(*references, *texts)
    threshold = params.threshold
    if "threshold" not in params.model_fields_set:
        threshold = default_threshold(model, *references, *texts)
    scored: list[tuple[float, int, int]] = []
    try:
        for which, reference in enumerate(references):
            found = similarities(reference, texts, model)
            scored.extend((score, reply, which) for reply, score in enumerate(found))
    except SeatrialError as exc:
        return Check.not_evaluated(
            phrased("similarity could not be computed: {error}", error=str(exc))
        )
    score, best, which = max(scored, key=lambda item: item[0])
    where = (
        phrased("the final reply")
        if params.target == "final_response"
        else phrased("reply {number}", number=best + 1)
    )
    expected = (
        phrased("the expected text")
        if len(references) == 1
        else phrased("expected text {number}", number=which + 1)
    )
    figure = phrased(
        "{where} is {score} similar to {expected} ({model})",
        where=where,
        score=format(score, ".3f"),
        expected=expected,
        model=model,
    )
    if score >= threshold:
        return Check.passed(
            phrased(
                "{figure}, at least {threshold}", figure=figure, threshold=format(threshold, "g")
            ),
            score=score,
        )
    return Check.failed(
        phrased("{figure}, below {threshold}", figure=figure, threshold=format(threshold, "g")),
        score=score,
    )


class LlmJudgeParams(AssertionParams):
    """Parameters of ``llm_judge`` (aliases ``semantic``, ``llm_rubric``, ``llm-rubric``)."""

    criteria: str | None = None
    """What the reply must do, in words."""
    value: str | None = None
    """promptfoo's spelling of ``criteria``."""
    rubric: str | None = None
    """Success standard replacing the suite's rubric for the case's category."""
    target: Target = "final_response"
    """``final_response`` or ``all_responses``."""
    threshold: float | None = Field(default=None, ge=0, le=1)
    """Lowest judge score that passes; unset means the judge's PASS/FAIL decides."""

    @model_validator(mode="after")
    def _one_spelling(self) -> LlmJudgeParams:
        if self.criteria is not None and self.value is not None:
            raise ValueError(_("write the criteria as `criteria` or `value`, not both"))
        return self

    @property
    def text(self) -> str | None:
        """The criteria, whichever key held them."""
        return self.criteria if self.criteria is not None else self.value


@assertion(
    "llm_judge",
    level="L3",
    params=LlmJudgeParams,
    failure_type="semantic_mismatch",
    aliases=("semantic", "llm_rubric", "llm-rubric"),
)
def llm_judge(params: LlmJudgeParams, ctx: AssertionContext) -> Check | Awaitable[Check]:
    """An LLM judge reads the conversation, the trace summary and the criteria and decides."""
    handle: JudgeHandle | None = ctx.judge
    if handle is None:
        return Check.not_evaluated(NO_JUDGE)
    return _llm_judge(params, ctx, handle)


async def _llm_judge(params: LlmJudgeParams, ctx: AssertionContext, handle: JudgeHandle) -> Check:
    from seatrial.judge import JudgeInput

    refused = handle.refusal()
    if refused is not None:
        return Check.not_evaluated(refused)
    case = ctx.case
    rubric = params.rubric or handle.rubric(case.category)
    item = JudgeInput(
        turns=user_turns(case),
        reply=judged_text(ctx, params.target),
        trace_summary=trace_summary(ctx),
        rubric=rubric,
        criteria=params.text or rubric or NO_CRITERIA,
        category=case.category,
    )
    try:
        verdict = await handle.judge(item)
    except GatewayError as exc:
        return Check.not_evaluated(_judge_error(exc))
    return conclude(verdict, item, handle, params.threshold)


def _judge_error(exc: GatewayError) -> Message:
    return phrased("judge_error: {error}", error=str(exc))


class FactualityParams(AssertionParams):
    """Parameters of ``factuality``."""

    value: str | None = None
    """The reference facts (promptfoo's spelling)."""
    reference: str | None = None
    """Same as ``value``."""
    threshold: float | None = Field(default=None, ge=0, le=1)
    """Lowest share of the reply's claims the reference must support; unset means all."""
    target: Target = "final_response"
    """``final_response`` or ``all_responses``."""

    @model_validator(mode="after")
    def _one_reference(self) -> FactualityParams:
        if (self.value is None) == (self.reference is None):
            raise ValueError(_("give the reference facts as `value` or `reference`, once"))
        return self


@assertion("factuality", level="L3", params=FactualityParams, failure_type="hallucination")
def factuality(params: FactualityParams, ctx: AssertionContext) -> Check | Awaitable[Check]:
    """The reply agrees with the reference facts and adds none that contradict them."""
    handle: JudgeHandle | None = ctx.judge
    if handle is None:
        return Check.not_evaluated(NO_JUDGE)
    return _factuality(params, ctx, handle)


async def _factuality(
    params: FactualityParams, ctx: AssertionContext, handle: JudgeHandle
) -> Check:
    refused = handle.refusal()
    if refused is not None:
        return Check.not_evaluated(refused)
    reference = params.value if params.value is not None else params.reference
    assert reference is not None  # the validator demands one of the two
    reply = judged_text(ctx, params.target)
    try:
        share, claims = await handle.factuality(reply, reference)
    except GatewayError as exc:
        return Check.not_evaluated(_judge_error(exc))
    threshold = params.threshold if params.threshold is not None else 1.0
    said = phrased_plural(
        "judge {model}: {share} of the reply's {n} claim is supported by the reference "
        "(threshold {threshold})",
        "judge {model}: {share} of the reply's {n} claims are supported by the reference "
        "(threshold {threshold})",
        len(claims),
        model=handle.model,
        share=format(share, ".0%"),
        threshold=format(threshold, ".0%"),
    )
    if share >= threshold:
        return Check.passed(said, score=share)
    unsupported = [c for c in claims if c.get("status") != "supported"]
    if unsupported:
        # The claims and their status are the judge's words, kept as it wrote them.
        listed = [
            phrased(
                "{claim} ({status})",
                claim=str(c.get("claim", "")),
                status=str(c.get("status", "unsupported")),
            )
            for c in unsupported[:3]
        ]
        said = phrased("{said}; not supported: {claims}", said=said, claims=listed)
    advisory = handle.advisory()
    if advisory is None:
        return Check.failed(said, score=share)
    return Check.warning(
        _advisory(said, advisory),
        score=share,
        review=ReviewRequest(
            why="warning",
            judge_verdict="FAIL",
            judge_reason=english(said),
            confidence=None,
            input="\n".join(user_turns(ctx.case)),
            output=reply,
            category=ctx.case.category,
        ),
    )
