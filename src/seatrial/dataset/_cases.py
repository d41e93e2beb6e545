"""Cases from benchmark tasks (expected actions become assertions, validated like a suite's)
and attempts from their trials."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from seatrial.assertion import AssertionContext, evaluate
from seatrial.case import Case, check_assertion
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AssertionResult, AttemptRecord, Metrics, Verdict
from seatrial.trace import Conversation, Trace

READ_PREFIXES = ("get_", "find_", "search_", "list_", "check_")
"""Tool names that only read: their expected arguments are not asserted."""
NOT_ASSERTED = frozenset({"calculate", "think", "transfer_to_human_agents", "respond"})
"""Tools that change nothing checkable: a calculator, a scratchpad, a hand-off whose
argument is a free-text summary, and tau-bench's pseudo-tool for a reply."""
SEQUENCE_ID = "expected-tools"
"""Id of the ``tool_sequence`` assertion built from a task's expected actions."""


@dataclass(frozen=True)
class ExpectedAction:
    """One action a task expects the agent to take."""

    name: str
    arguments: Mapping[str, Any]


def is_write(name: str) -> bool:
    """Whether an expected call of ``name`` changes state (so its arguments are asserted)."""
    return not name.startswith(READ_PREFIXES) and name not in NOT_ASSERTED


def expected_assertions(actions: Sequence[ExpectedAction]) -> list[dict[str, Any]]:
    """A ``tool_sequence`` of every expected tool in order (soft: the order of look-ups may
    differ between good runs) and a hard ``tool_params`` per expected write."""
    names = [a.name for a in actions if a.name != "respond"]
    if not names:
        return []
    found: list[dict[str, Any]] = [
        {"type": "tool_sequence", "id": SEQUENCE_ID, "expected": names, "must_pass": False}
    ]
    seen: Counter[str] = Counter()
    for action in actions:
        if not is_write(action.name):
            continue
        seen[action.name] += 1
        suffix = f"#{seen[action.name]}" if seen[action.name] > 1 else ""
        found.append(
            {
                "type": "tool_params",
                "id": f"params:{action.name}{suffix}",
                "tool": action.name,
                "expected": dict(action.arguments),
            }
        )
    return found


def build_case(raw: dict[str, Any], where: str) -> Case:
    """The case from ``raw``, checked by the model and by the assertion registry.

    Raises :class:`InputError` naming ``where`` (the task in the file) when it does not hold.
    """
    try:
        case = Case.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        at = ".".join(str(part) for part in first["loc"])
        raise InputError(
            _("{where}: cannot make a case of it: `{at}`: {value}").format(
                where=where, at=at, value=first["msg"]
            )
        ) from None
    for spec in case.assertions:
        problems = check_assertion(spec.type, spec.params).problems
        if problems:
            raise InputError(
                _("{where}: its expected action makes an invalid {value}").format(
                    where=where, value=problems[0][1]
                )
            )
    return case


def judge_trace(
    case: Case, trace: Trace, response: str, responses: list[str]
) -> tuple[list[AssertionResult], float | None]:
    """The case's assertions evaluated on an imported trace (informative: the benchmark's
    reward decides the verdict), with their weighted score."""
    context = AssertionContext(case=case, trace=trace, response=response, responses=responses)
    evaluation = evaluate(case, context)
    return list(evaluation.results), evaluation.score


@dataclass(frozen=True)
class Outcome:
    """The benchmark's verdict on one trial, in Seatrial's terms."""

    verdict: Verdict
    reason: str
    failure_type: str | None = None


def make_attempt(
    run_id: str,
    case: Case,
    attempt: int,
    conversation: Conversation,
    outcome: Outcome,
    session_id: str = "",
) -> AttemptRecord:
    """One stored attempt: the benchmark's verdict, the case's assertions judged on the
    trace (informative), the replies, metrics and the trace itself."""
    results, score = judge_trace(
        case, conversation.trace, conversation.response, conversation.responses
    )
    return AttemptRecord(
        run_id=run_id,
        case_id=case.id,
        attempt=attempt,
        verdict=outcome.verdict,
        failure_type=outcome.failure_type if outcome.verdict != "PASS" else None,
        reason=outcome.reason,
        score=score,
        metrics=Metrics.of(conversation.trace),
        assertions=results,
        response=conversation.response,
        responses=conversation.responses,
        error=outcome.reason if outcome.verdict == "ERROR" else None,
        session_id=session_id,
        started_at=conversation.started_ns / 1e9,
        finished_at=conversation.finished_ns / 1e9,
        trace=conversation.trace,
    )
