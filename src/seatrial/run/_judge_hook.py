"""The LLM judge during a run: one judge for every attempt, its gate, its review items.

The gate is decided once, when the run starts, from the judge's latest calibration for its
(model, prompt hash): a judge FAIL fails an attempt only when that calibration reached
``judge.min_agreement`` on at least ``judge.min_labels`` items; otherwise the FAIL is advisory
(WARNING) and the reason says what to do. Review items the assertions ask for are collected
here and stored when the run ends (after the attempts they point at).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seatrial.assertion import Evaluation
from seatrial.trace import Trace
from seatrial.trace import attrs as A

if TYPE_CHECKING:
    # The judge pulls in the gateway and its SDKs: only runs that use one pay for it.
    from seatrial.config import JudgeSettings
    from seatrial.judge._llm import Judge
    from seatrial.judge._types import Calibration, JudgeInput, JudgeVerdict
    from seatrial.store import ReviewItem, Store

_active: contextvars.ContextVar[JudgeRuntime | None] = contextvars.ContextVar(
    "seatrial_judge", default=None
)


@dataclass(frozen=True)
class JudgeGate:
    """Whether the judge's FAIL may fail an attempt, and why (quoted in every report)."""

    calibrated: bool
    """True when the latest calibration met both bars."""
    reason: str
    """One line saying why, with what to do when it is not calibrated."""
    agreement: float | None = None
    """The latest calibration's agreement with people, if there is one."""
    items: int | None = None
    """How many labelled items that calibration used."""
    alarm: str | None = None
    """Set when the latest calibration fell below the bar the previous one met."""


def judge_gate(
    model: str,
    prompt_version: str,
    prompt_hash: str,
    history: list[Calibration],
    settings: JudgeSettings,
) -> JudgeGate:
    """Decide the gate from ``history`` (this model and prompt hash's calibrations, newest
    first) against ``judge.min_agreement`` and ``judge.min_labels``."""
    who = f"judge {model} prompt {prompt_version} (hash {prompt_hash[:12]})"
    fix = f"run `seatrial judge calibrate --judge {model} --labels FILE`"
    bar = (
        f"judge.min_agreement {settings.min_agreement:.0%} on "
        f"judge.min_labels {settings.min_labels} items"
    )
    if not history:
        return JudgeGate(
            False, f"{who} is not calibrated: no calibration yet; its FAIL is advisory; {fix}"
        )
    latest = history[0]
    measured = f"{latest.agreement:.1%} agreement on {latest.items} labelled items"
    if _meets(latest, settings):
        return JudgeGate(
            True, f"{who} is calibrated: {measured} (bar: {bar})", latest.agreement, latest.items
        )
    alarm = None
    if len(history) > 1 and _meets(history[1], settings):
        before = history[1]
        alarm = (
            f"ALARM: {who} fell below the bar: {before.agreement:.1%} on {before.items} items, "
            f"now {measured} (bar: {bar}); its FAIL no longer fails runs until it is "
            "recalibrated"
        )
    return JudgeGate(
        False,
        f"{who} is not calibrated: {measured}, under {bar}; its FAIL is advisory; {fix}",
        latest.agreement,
        latest.items,
        alarm,
    )


def _meets(calibration: Calibration, settings: JudgeSettings) -> bool:
    return (
        calibration.items >= settings.min_labels and calibration.agreement >= settings.min_agreement
    )


def agent_models(trace: Trace) -> set[str]:
    """Every model the agent asked for or got answers from (``chat`` spans) in ``trace``."""
    models: set[str] = set()
    for span in trace.spans:
        if span.operation != A.OP_CHAT:
            continue
        for key in (A.REQUEST_MODEL, A.RESPONSE_MODEL):
            value = span.attributes.get(key)
            if value:
                models.add(str(value))
    return models


class JudgeRuntime:
    """A run's judge: the Judge, its gate, the suite's rubrics and the review items queued."""

    def __init__(
        self, judge: Judge, gate: JudgeGate, rubrics: dict[str, str] | None = None
    ) -> None:
        self.judge = judge
        self.gate = gate
        self.rubrics: dict[str, str] = dict(rubrics or {})
        self._pending: list[ReviewItem] = []

    @classmethod
    def open(
        cls, judge: Judge, store: Store, rubrics: dict[str, str] | None = None
    ) -> JudgeRuntime:
        """The runtime for ``judge``, its gate read from ``store``'s calibrations."""
        history = [c for c in store.calibrations(judge.model) if c.prompt_hash == judge.prompt_hash]
        gate = judge_gate(
            judge.model, judge.prompt_version, judge.prompt_hash, history, judge.settings
        )
        return cls(judge, gate, rubrics)

    def record(self) -> dict[str, Any]:
        """What the run's settings say about the judge (reports quote it)."""
        return {
            **self.judge.identity(),
            "calibrated": self.gate.calibrated,
            "agreement": self.gate.agreement,
            "items": self.gate.items,
            "reason": self.gate.reason,
        }

    def for_attempt(self, run_id: str, case_id: str, attempt: int, trace: Trace) -> AttemptJudge:
        """The handle the attempt's L3 checks use."""
        return AttemptJudge(self, run_id, case_id, attempt, agent_models(trace))

    def queue(self, evaluation: Evaluation, run_id: str, case_id: str, attempt: int) -> None:
        """Keep the review items ``evaluation`` asks for, to store when the run ends."""
        if not evaluation.review_items:
            return
        from seatrial.store import ReviewItem

        now = time.time()
        self._pending += [
            ReviewItem(
                run_id=run_id,
                case_id=case_id,
                attempt=attempt,
                assertion_id=request.assertion_id,
                why=request.why,
                judge_model=self.judge.model,
                judge_verdict=request.judge_verdict,
                judge_reason=request.judge_reason,
                confidence=request.confidence,
                input=request.input,
                output=request.output,
                category=request.category,
                created_at=now,
            )
            for request in evaluation.review_items
        ]

    def take_review_items(self) -> list[ReviewItem]:
        """The review items queued since the last call (the caller stores them)."""
        items, self._pending = self._pending, []
        return items


class AttemptJudge:
    """One attempt's judge (``seatrial.assertion.JudgeHandle``): calls carry its run, case
    and attempt, and the judge refuses to grade its own model."""

    def __init__(
        self, runtime: JudgeRuntime, run_id: str, case_id: str, attempt: int, models: set[str]
    ) -> None:
        self._runtime = runtime
        self._judge = runtime.judge
        self._where: dict[str, Any] = {"run_id": run_id, "case_id": case_id, "attempt": attempt}
        self._models = models

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

    def gate(self) -> str | None:
        """None when a judge FAIL may fail the attempt; else why it is advisory."""
        gate = self._runtime.gate
        return None if gate.calibrated else gate.reason

    def rubric(self, category: str) -> str | None:
        """The suite's rubric for ``category``."""
        return self._runtime.rubrics.get(category) if category else None

    async def judge(self, item: JudgeInput) -> JudgeVerdict:
        """The judge's verdict on ``item``."""
        return await self._judge.judge(item, **self._where)

    async def factuality(self, reply: str, reference: str) -> tuple[float, list[dict[str, Any]]]:
        """The share of the reply's claims the reference supports, and each claim."""
        share, claims = await self._judge.factuality(reply, reference, **self._where)
        return share, [dict(claim) for claim in claims]


def active_judge() -> JudgeRuntime | None:
    """The judge attempts started in this context are evaluated with, if any."""
    return _active.get()


@contextmanager
def use_judge(runtime: JudgeRuntime | None) -> Iterator[JudgeRuntime | None]:
    """Evaluate the attempts started in this block (and the tasks it creates) with ``runtime``."""
    token = _active.set(runtime)
    try:
        yield runtime
    finally:
        _active.reset(token)
