"""The judge as one attempt's L3 checks see it: :class:`JudgeHandle`, and the runner's
implementation :class:`AttemptJudge`.

The protocol lives with the judge, not with the assertions that call it: assertions read it
only in annotations, and the package imports nothing heavy for it (no gateway, no models).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from seatrial.trace import Trace
from seatrial.trace import attrs as A

if TYPE_CHECKING:
    from seatrial.judge._llm import Judge
    from seatrial.judge._trust import JudgeTrust
    from seatrial.judge._types import JudgeInput, JudgeVerdict


class JudgeHandle(Protocol):
    """The attempt's judge, as the L3 checks use it (the runner builds one per attempt)."""

    @property
    def model(self) -> str:
        """The judge's gateway model name."""

    @property
    def confidence_floor(self) -> float:
        """Verdicts less confident than this go to a person (WARNING and a review item)."""

    def refusal(self) -> str | None:
        """Why the judge may not judge this attempt (it is the agent's model), or None."""

    def advisory(self) -> str | None:
        """None when a judge FAIL may fail the attempt; else why it is only advisory."""

    def rubric(self, category: str) -> str | None:
        """The suite's rubric for ``category``, if it has one."""

    async def judge(self, item: JudgeInput) -> JudgeVerdict:
        """Judge one attempt; raises GatewayError (``judge_error``) when no answer is usable."""

    async def factuality(self, reply: str, reference: str) -> tuple[float, list[dict[str, Any]]]:
        """The share of the reply's claims the reference supports, and each claim's finding."""


def agent_models(trace: Trace) -> set[str]:
    """Every model the agent asked for or got answers from (``chat`` spans) in ``trace``."""
    models: set[str] = set()
    for span in trace.spans:
        if span.operation != A.OP_CHAT or A.seatrial_call(span.attributes):
            continue  # a simulated user's model is not the agent's: the judge may grade it
        for key in (A.REQUEST_MODEL, A.RESPONSE_MODEL):
            value = span.attributes.get(key)
            if value:
                models.add(str(value))
    return models


class AttemptJudge:
    """One attempt's :class:`JudgeHandle`: calls carry its run, case and attempt, the run's
    trust decides whether a FAIL counts, and the judge refuses to grade its own model."""

    def __init__(
        self,
        judge: Judge,
        trust: JudgeTrust,
        *,
        run_id: str,
        case_id: str,
        attempt: int,
        agent_models: set[str],
        rubrics: Mapping[str, str] | None = None,
    ) -> None:
        self._judge = judge
        self._trust = trust
        self._where: dict[str, Any] = {"run_id": run_id, "case_id": case_id, "attempt": attempt}
        self._models = agent_models
        self._rubrics: Mapping[str, str] = rubrics or {}

    @property
    def model(self) -> str:
        """The judge's gateway model name."""
        return self._judge.model

    @property
    def confidence_floor(self) -> float:
        """``judge.confidence_floor``."""
        return self._judge.settings.confidence_floor

    def refusal(self) -> str | None:
        """Why the judge may not grade this attempt (the agent used its model), or None."""
        for model in sorted(self._models):
            reason = self._judge.refuse_same_model(model)
            if reason is not None:
                return f"judge refused: {reason}"
        return None

    def advisory(self) -> str | None:
        """None when a judge FAIL may fail the attempt; else why it is advisory."""
        return None if self._trust.calibrated else self._trust.reason

    def rubric(self, category: str) -> str | None:
        """The suite's rubric for ``category``."""
        return self._rubrics.get(category) if category else None

    async def judge(self, item: JudgeInput) -> JudgeVerdict:
        """The judge's verdict on ``item``."""
        return await self._judge.judge(item, **self._where)

    async def factuality(self, reply: str, reference: str) -> tuple[float, list[dict[str, Any]]]:
        """The share of the reply's claims the reference supports, and each claim."""
        share, claims = await self._judge.factuality(reply, reference, **self._where)
        return share, [dict(claim) for claim in claims]
