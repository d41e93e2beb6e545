"""The ``judge:`` section of ``seatrial.yaml``: which model judges L3 assertions, how, and the
bar its calibration must reach before a judge FAIL fails a run.

Defined here, next to the judge that reads it; the project file only composes it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class JudgeSettings(BaseModel):
    """The ``judge:`` section: which model judges L3 assertions, and when its FAIL counts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    """Name of the judge model among ``models:``; unset means no LLM judge (``--judge`` sets
    it for one run)."""
    prompt_version: str = Field(default="v1", pattern=r"^v[0-9]+$")
    """Version of the shipped prompt templates (``v1``); a new version needs a new
    calibration."""
    samples: int = Field(default=1, ge=1)
    """Calls per judgement; with 3, the verdict is the majority (a tie gives WARNING)."""
    min_agreement: float = Field(default=0.85, ge=0.0, le=1.0)
    """Agreement with human labels a calibration needs before a judge FAIL fails a run."""
    min_labels: int = Field(default=100, ge=1)
    """Labelled items a calibration needs before a judge FAIL fails a run."""
    confidence_floor: float = Field(default=0.6, ge=0.0, le=1.0)
    """Verdicts less confident than this become WARNING and go to the review queue."""
    allow_same_model: bool = False
    """Let the judge be the agent's own model or family (self-preference bias: off)."""
    max_tokens: int = Field(default=512, ge=16)
    """Most tokens the judge may write per call. A verdict object is well under 200; without
    a cap a weak judge under a JSON grammar can write until its timeout. An answer cut off
    here is not valid JSON and counts as a failed try (raise it for long factuality lists)."""
    max_retries: int = Field(default=2, ge=0)
    """New calls after an answer that is not valid JSON, before the judge gives up."""
