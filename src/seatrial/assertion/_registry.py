"""The assertion registry: built-in types and plugins register the same way.

::

    @assertion("tool_called", level="L1", params=ToolCalledParams, failure_type="tool_not_called")
    def tool_called(params: ToolCalledParams, ctx: AssertionContext) -> Check: ...

A check may be ``async def`` (an LLM judge waits on the network): ``evaluate_async`` awaits
it, while the synchronous ``evaluate`` records it as not evaluated.

The table itself (names, aliases, levels, parameter models) is :mod:`seatrial.registry`, a
leaf that :mod:`seatrial.case` reads too. Third-party packages register from the entry-point
group ``seatrial`` (loaded lazily, a broken plugin is a logged warning).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from seatrial.case import Case
from seatrial.i18n import Message, english
from seatrial.record import AssertionVerdict, Level
from seatrial.registry import AssertionParams, AssertionType, aliases, known_types, lookup, register
from seatrial.trace import Trace, TraceToolCall

__all__ = [
    "AssertionContext",
    "AssertionParams",
    "AssertionType",
    "Check",
    "CheckFunction",
    "CheckOutcome",
    "ReviewRequest",
    "aliases",
    "assertion",
    "known_types",
    "lookup",
]


ReviewWhy = Literal["warning", "low_confidence", "disagreement"]
"""Why a person should label an attempt (the review queue's ``why``)."""


class ReviewRequest(BaseModel):
    """An attempt a person should label: the judge was unsure, unconfident or only advisory."""

    model_config = ConfigDict(frozen=True)

    assertion_id: str = ""
    """The assertion that asked; filled in by the evaluator (a check does not know its id)."""
    why: ReviewWhy
    """``warning`` (the judge said WARNING, or its FAIL was only advisory), ``low_confidence``
    (under the configured floor) or ``disagreement`` (judge and rules disagree)."""
    judge_verdict: str
    """What the judge answered: PASS, FAIL or WARNING."""
    judge_reason: str = ""
    """The judge's reason, as it gave it."""
    confidence: float | None = None
    """The judge's confidence in [0, 1]."""
    input: str = ""
    """The user's turns, as the judge saw them."""
    output: str = ""
    """The reply that was judged."""
    category: str = ""
    """The case's category (per-category agreement in calibration)."""


@dataclass(frozen=True)
class Check:
    """What an assertion concluded.

    A reason is given as a message (``seatrial.i18n.message``), so it reads in any language;
    the English it renders to is kept as :attr:`reason`. Plain text is accepted too (a
    plugin's reason, or text that holds nothing to translate): it reads as written.
    """

    verdict: AssertionVerdict
    reason: str = ""
    failure_type: str | None = None
    score: float | None = None
    advisory: bool = False
    """The attempt gets WARNING for a person to look at (recorded as not evaluated)."""
    review: ReviewRequest | None = None
    """A review-queue entry to create for this attempt."""
    message: Message | None = None
    """The reason as a message id and its parameters; None for a reason given as text."""
    span_id: str | None = None
    """The span the verdict points at (the call that broke the check), when there is one."""

    @classmethod
    def passed(
        cls, reason: Reason = "", score: float | None = None, *, span_id: str | None = None
    ) -> Check:
        """A pass."""
        return _check(cls, "pass", reason, None, score, span_id)

    @classmethod
    def failed(
        cls,
        reason: Reason,
        failure_type: str | None = None,
        score: float | None = None,
        *,
        span_id: str | None = None,
    ) -> Check:
        """A fail; ``failure_type`` defaults to the assertion type's own. ``span_id`` names
        the span that broke the check (the dashboard marks it on the trace)."""
        return _check(cls, "fail", reason, failure_type, score, span_id)

    @classmethod
    def not_evaluated(cls, reason: Reason) -> Check:
        """The assertion could not be evaluated (never counted as passed)."""
        return _check(cls, "not_evaluated", reason, None, None, None)

    @classmethod
    def warning(
        cls, reason: Reason, *, score: float | None = None, review: ReviewRequest | None = None
    ) -> Check:
        """Neither pass nor fail: the attempt gets WARNING and, with ``review``, a review item.

        Recorded as not evaluated, so it never counts as passed nor enters the soft score.
        """
        said, text = _said(reason)
        return cls("not_evaluated", text, None, score, True, review, said)


Reason = str | Message
"""A reason as text, or as a message to render in the reader's language."""


def _said(reason: Reason) -> tuple[Message | None, str]:
    if type(reason) is str:
        return None, reason
    if isinstance(reason, dict):
        return reason, english(reason)
    return None, str(reason)


def _check(
    cls: type[Check],
    verdict: AssertionVerdict,
    reason: Reason,
    failure_type: str | None,
    score: float | None,
    span_id: str | None,
) -> Check:
    said, text = _said(reason)
    if cls is not Check:
        return cls(verdict, text, failure_type, score, False, None, said, span_id)
    # Every assertion of every attempt returns a Check: filling the instance's dict directly
    # costs less than half of the frozen dataclass's __init__ (an object.__setattr__ a field).
    check = object.__new__(Check)
    fields = check.__dict__
    fields["verdict"] = verdict
    fields["reason"] = text
    fields["failure_type"] = failure_type
    fields["score"] = score
    fields["advisory"] = False
    fields["review"] = None
    fields["message"] = said
    fields["span_id"] = span_id
    return check


@dataclass
class AssertionContext:
    """What an assertion may read: the case and what the agent did. Never the agent itself."""

    case: Case
    trace: Trace
    response: str = ""
    responses: list[str] = field(default_factory=list)
    final_state: dict[str, Any] | None = None
    workspace: Path | None = None
    judge: Any | None = None
    """The attempt's LLM judge (``seatrial.assertion.JudgeHandle``); None when none is set up."""
    _tool_calls: tuple[Trace, list[TraceToolCall]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def tool_calls(self) -> list[TraceToolCall]:
        """The trace's tool calls, decoded once per context (most L1 checks read them)."""
        cached = self._tool_calls
        if cached is None or cached[0] is not self.trace:
            cached = (self.trace, self.trace.tool_calls())
            self._tool_calls = cached
        return cached[1]


P = TypeVar("P", bound=AssertionParams)
CheckOutcome = Check | Awaitable[Check]
"""What a check function returns: a Check, or an awaitable of one (an async check)."""
CheckFunction = Callable[[Any, AssertionContext], CheckOutcome]
R = TypeVar("R", bound=CheckOutcome)


def assertion(
    name: str,
    *,
    level: Level,
    params: type[AssertionParams],
    failure_type: str,
    aliases: tuple[str, ...] = (),
) -> Callable[[Callable[[P, AssertionContext], R]], Callable[[P, AssertionContext], R]]:
    """Register an assertion type under ``name`` (and ``aliases``); ``async def`` checks too."""

    def add(check: Callable[[P, AssertionContext], R]) -> Callable[[P, AssertionContext], R]:
        register(
            AssertionType(
                name=name,
                level=level,
                params=params,
                check=check,
                failure_type=failure_type,
                aliases=aliases,
                doc=(check.__doc__ or "").strip(),
            )
        )
        return check

    return add
