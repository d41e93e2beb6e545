"""Records the LLM judge reads and writes: what it is shown and what it answers.

The calibration that says whether its FAIL may fail a run is a stored record
(:class:`seatrial.store.Calibration`): the store keeps it without knowing the judge.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from seatrial.errors import GatewayError

JudgeLabel = Literal["PASS", "FAIL", "WARNING"]


class JudgeError(GatewayError):
    """The judge gave no usable answer (malformed output on every try, or the call failed).

    ``failure_type`` is always ``judge_error``: the assertion could not be evaluated, which is
    an ERROR of the judge, not a FAIL of the agent.
    """

    failure_type = "judge_error"


class JudgeInput(BaseModel):
    """Everything the judge is shown about one attempt."""

    model_config = ConfigDict(frozen=True)

    turns: list[str]
    """The user's turns of the conversation, in order."""
    reply: str
    """The agent's final reply, the thing being judged."""
    trace_summary: str = ""
    """Tools the agent called, with arguments and results, one per line (may be empty)."""
    rubric: str | None = None
    """The case's scoring rubric, when it has one."""
    criteria: str
    """What the reply must achieve for the case to pass, in plain words."""
    category: str = ""
    """The case's category (e.g. an intent such as 退款); used for per-category agreement."""
    reference: str | None = None
    """A reference answer or the facts the reply should rest on, when the case has one."""


class JudgeSample(BaseModel):
    """One call's answer when a verdict is the majority of several samples."""

    model_config = ConfigDict(frozen=True)

    verdict: JudgeLabel
    """This sample's verdict."""
    confidence: float
    """This sample's confidence in [0, 1]."""
    failure_type: str | None = None
    """This sample's failure type, when it said FAIL."""
    reason: str = ""
    """This sample's reason."""


class JudgeVerdict(BaseModel):
    """The judge's answer about one attempt."""

    model_config = ConfigDict(frozen=True)

    verdict: JudgeLabel
    """PASS, FAIL or WARNING (the judge is unsure, or samples tied)."""
    confidence: float = Field(ge=0.0, le=1.0)
    """How sure the judge is, in [0, 1]; the mean over samples when there are several."""
    failure_type: str | None = None
    """The failure type named by the judge (e.g. ``hallucination``), when the verdict is FAIL."""
    reason: str
    """Why, in the judge's words (or a note on how the samples split)."""
    dimension_scores: dict[str, float] = Field(default_factory=dict)
    """Scores per rubric dimension in [0, 1], when the rubric names dimensions."""
    samples: list[JudgeSample] = Field(default_factory=list)
    """Every sample's answer when ``samples`` > 1; empty for a single call."""
    prompt_version: str
    """Version of the prompt template used, e.g. ``v1``."""
    prompt_hash: str
    """sha256 of the prompt template's text: calibrations are keyed on it."""
    model: str
    """The gateway model name of the judge."""
