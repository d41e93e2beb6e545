"""The LLM judge during a run: one judge for every attempt, its trust, its review items.

The runner's side only: the trust itself (may this judge's FAIL fail an attempt?) is decided
by :mod:`seatrial.judge`'s calibration policy, once, when the run starts; each attempt gets a
:class:`seatrial.judge.AttemptJudge`. Review items the assertions ask for are collected here
and stored when the run ends (after the attempts they point at). The runtime is handed to
each attempt (``RunOptions.judge``), never looked up from the context.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from seatrial.assertion import Evaluation
from seatrial.judge import AttemptJudge, agent_models, trust_of
from seatrial.record import JudgeSetting
from seatrial.trace import Trace, TraceRecorder, trusted_model

if TYPE_CHECKING:
    # The judge pulls in the gateway and its SDKs: only runs that use one pay for it.
    from seatrial.judge import Judge, JudgeTrust
    from seatrial.store import ReviewItem, Store


class JudgeRuntime:
    """A run's judge: the Judge, its trust, the suite's rubrics and the review items queued."""

    def __init__(
        self, judge: Judge, trust: JudgeTrust, rubrics: dict[str, str] | None = None
    ) -> None:
        self.judge = judge
        self.trust = trust
        self.rubrics: dict[str, str] = dict(rubrics or {})
        self._pending: list[ReviewItem] = []

    @classmethod
    def open(
        cls, judge: Judge, store: Store, rubrics: dict[str, str] | None = None
    ) -> JudgeRuntime:
        """The runtime for ``judge``, its trust read from ``store``'s calibrations."""
        return cls(judge, trust_of(judge, store.calibrations(judge.model)), rubrics)

    def record(self) -> JudgeSetting:
        """What the run's settings say about the judge (reports quote it)."""
        return JudgeSetting(
            **self.judge.identity(),
            calibrated=self.trust.calibrated,
            agreement=self.trust.agreement,
            items=self.trust.items,
            reason=self.trust.reason,
        )

    def for_attempt(self, run_id: str, case_id: str, attempt: int, trace: Trace) -> AttemptJudge:
        """The handle the attempt's L3 checks use."""
        return AttemptJudge(
            self.judge,
            self.trust,
            run_id=run_id,
            case_id=case_id,
            attempt=attempt,
            agent_models=agent_models(trace),
            rubrics=self.rubrics,
        )

    def spans_for(self, trace: Trace) -> JudgeSpans:
        """Where the judge's calls on the attempt of ``trace`` leave their spans."""
        return JudgeSpans(trace)

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


class JudgeSpans:
    """The judge's ``chat {model}`` spans of one attempt: recorded while the judge works (the
    agent's own span has ended by then), then added to the attempt's trace under its root.

    Each carries ``seatrial.gateway.purpose = judge``, so the agent's model-call count,
    tokens and cost (``limits``, metrics) leave them out, as they leave out a simulated user's.
    """

    def __init__(self, trace: Trace) -> None:
        self.recorder = TraceRecorder(trace.trace_id)
        """Active around the judge's calls: the gateway opens their spans on it."""

    def into(self, trace: Trace) -> Trace:
        """``trace`` with the judge's spans added (itself when the judge made no call)."""
        if not self.recorder.spans:
            return trace
        root = trace.agent_span() or next((s for s in trace.spans if not s.parent_span_id), None)
        added = self.recorder.trace().spans
        for span in added:
            if span.parent_span_id is None and root is not None:
                span.parent_span_id = root.span_id
        # A new trace, not a model_copy: a copy would share the decoded-views cache.
        return trusted_model(
            Trace,
            {
                "format_version": trace.format_version,
                "trace_id": trace.trace_id,
                "spans": [*trace.spans, *added],
                "resource": trace.resource,
            },
        )
