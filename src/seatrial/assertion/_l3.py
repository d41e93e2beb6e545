"""L3 semantic assertions: embedding similarity, the LLM judge, factuality.

``similar`` embeds with the bundled model unless the case names another. The LLM judge and
factuality need a judge (``seatrial.judge``); until one is configured they are recorded as
not evaluated, which never counts as passed (DESIGN.md "Verdicts").
"""

from __future__ import annotations

from pydantic import Field, model_validator

from seatrial.assertion._common import Target, replies
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.errors import SeatrialError

NO_JUDGE = (
    "no LLM judge is configured; L3 assertions are evaluated once a judge is set up "
    "(see docs/judge.md)"
)


class SimilarParams(AssertionParams):
    """Parameters of ``similar``."""

    value: str = Field(min_length=1)
    """The reference answer the reply should mean the same as."""
    threshold: float = Field(default=0.75, ge=0, le=1)
    """Lowest cosine similarity that passes (promptfoo's default, 0.75)."""
    target: Target = "final_response"
    """``final_response``, or ``all_responses`` (the reply most similar to ``value`` counts)."""
    model: str | None = Field(default=None, min_length=1)
    """Embeddings model: unset for the bundled static model, ``all-MiniLM-L6-v2`` with the
    ``seatrial[semantic]`` extra, or a gateway model configured with ``embedding: true``."""


@assertion("similar", level="L3", params=SimilarParams, failure_type="semantic_mismatch")
def similar(params: SimilarParams, ctx: AssertionContext) -> Check:
    """The reply's embedding is at least ``threshold`` similar to ``value``'s (cosine)."""
    # Imported on first use: loading the assertion registry should not load numpy and models.
    from seatrial.judge._embedding import STATIC_MODEL, similarities

    texts = replies(ctx, params.target)
    model = params.model or STATIC_MODEL
    try:
        scores = similarities(params.value, texts, params.model)
    except SeatrialError as exc:
        return Check.not_evaluated(f"similarity could not be computed: {exc}")
    best = max(range(len(scores)), key=scores.__getitem__)
    score = scores[best]
    where = "the final reply" if params.target == "final_response" else f"reply {best + 1}"
    figure = f"{where} is {score:.3f} similar to the expected text ({model})"
    if score >= params.threshold:
        return Check.passed(f"{figure}, at least {params.threshold:g}", score=score)
    return Check.failed(f"{figure}, below {params.threshold:g}", score=score)


class LlmJudgeParams(AssertionParams):
    """Parameters of ``llm_judge`` (aliases ``semantic``, ``llm_rubric``, ``llm-rubric``)."""

    criteria: str | None = None
    """What the reply must do, in words (seed 002's spelling)."""
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
            raise ValueError("write the criteria as `criteria` or `value`, not both")
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
def llm_judge(params: LlmJudgeParams, ctx: AssertionContext) -> Check:
    """An LLM judge reads the conversation, the trace summary and the criteria and decides."""
    return Check.not_evaluated(NO_JUDGE)


class FactualityParams(AssertionParams):
    """Parameters of ``factuality``."""

    value: str | None = None
    """The reference facts (promptfoo's spelling)."""
    reference: str | None = None
    """Same as ``value``."""
    threshold: float | None = Field(default=None, ge=0, le=1)
    """Lowest judge score that passes."""
    target: Target = "final_response"
    """``final_response`` or ``all_responses``."""

    @model_validator(mode="after")
    def _one_reference(self) -> FactualityParams:
        if (self.value is None) == (self.reference is None):
            raise ValueError("give the reference facts as `value` or `reference`, once")
        return self


@assertion("factuality", level="L3", params=FactualityParams, failure_type="hallucination")
def factuality(params: FactualityParams, ctx: AssertionContext) -> Check:
    """The reply agrees with the reference facts and adds none that contradict them."""
    return Check.not_evaluated(NO_JUDGE)
