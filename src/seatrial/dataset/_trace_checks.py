"""L1 and L2 checks over stored production traces (``seatrial traces check CHECKS.yaml``).

A checks file is a YAML list of assertions written as in a case (or a mapping whose
``checks:`` key holds that list), validated when it is read with the suite loader's messages,
each at its file and line. L3 checks are refused: running them would call a model for every
stored trace.

Each trace is checked as an attempt would be: :func:`seatrial.assertion.evaluate` over a case
holding the user's turns (what ``no_fabricated_ids`` compares ids with) and the checks, with
the replies the trace records (``gen_ai.output.messages``, OpenInference's ``output.value``).
A check that needs what a production trace cannot hold (a workspace, a final state) is
``not_evaluated``, never passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from seatrial.assertion import AssertionContext, evaluate
from seatrial.case import AssertionSpec, Case, check_assertion, explain, parse_yaml, read_text
from seatrial.dataset._from_trace_turns import agent_replies, user_turns
from seatrial.errors import Problem, SuiteError
from seatrial.i18n import gettext as _
from seatrial.store import Store, TraceCheck, TraceQuery
from seatrial.trace import Trace

NO_USER_MESSAGE = "(the trace records no user message)"
"""The input of the case a trace is checked as, when the trace holds no user message."""
COMMON_KEYS = tuple(AssertionSpec.model_fields)


def _problem(shown: str, line: int | None, message: str, fix: str) -> Problem:
    return Problem(shown, line, message, fix)


def _items(data: Any, shown: str, line: int | None) -> tuple[list[Any], tuple[str | int, ...]]:
    """The list of checks and where it sits in the document."""
    if isinstance(data, list):
        return data, ()
    if isinstance(data, dict) and isinstance(data.get("checks"), list) and len(data) == 1:
        return data["checks"], ("checks",)
    raise SuiteError(
        [
            _problem(
                shown,
                line,
                _("a checks file holds a list of assertions (or `checks:` with that list)"),
                _("write `- type: tool_called` items, one per check, as in a case's `assertions`"),
            )
        ]
    )


def load_trace_checks(path: Path) -> list[AssertionSpec]:
    """The checks in ``path``; :class:`SuiteError` naming every problem with its line."""
    shown = str(path)
    text, problems = read_text(path, shown)
    if text is None:
        raise SuiteError(problems)
    document = parse_yaml(text, shown)
    if document.problems:
        raise SuiteError(document.problems)
    items, base = _items(document.data, shown, document.locator.line(()))
    specs: list[AssertionSpec] = []
    for index, item in enumerate(items):
        at = (*base, index)
        line = document.locator.line(at)
        if not isinstance(item, dict):
            problems.append(
                _problem(
                    shown, line, _("a check is a mapping with a `type`"), _("write `type: ...`")
                )
            )
            continue
        try:
            spec = AssertionSpec.model_validate(item)
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                said = explain(error, AssertionSpec, noun="key")
                problems.append(
                    _problem(shown, document.locator.line((*at, *said.loc)), said.message, said.fix)
                )
            continue
        checked = check_assertion(spec.type, spec.params)
        for loc, message, fix in checked.problems:
            problems.append(_problem(shown, document.locator.line((*at, *loc)), message, fix))
        if checked.kind is not None and (spec.level or checked.kind.level) == "L3":
            problems.append(
                _problem(
                    shown,
                    document.locator.line((*at, "type")),
                    _(
                        "`{type}` is an L3 check: it would call a model for every trace; "
                        "`seatrial traces check` runs L1 and L2 checks only"
                    ).format(type=spec.type),
                    _("remove it, or check meaning in a run (`seatrial run`) with a judge"),
                )
            )
        specs.append(spec)
    if not specs and not problems:
        problems.append(
            _problem(shown, document.locator.line(base), _("the file holds no check"), _("add one"))
        )
    if problems:
        raise SuiteError(sorted(problems, key=lambda p: p.line or 0))
    return specs


def check_trace(trace: Trace, checks: Sequence[AssertionSpec]) -> list[TraceCheck]:
    """Every check's verdict on one trace, in the order evaluated."""
    turns = user_turns(trace) or [NO_USER_MESSAGE]
    case = Case.model_validate(
        {
            "id": f"trace-{trace.trace_id[:16]}",
            **({"input": turns[0]} if len(turns) == 1 else {"turns": turns}),
            "assertions": [spec.model_dump(exclude_none=True) for spec in checks],
        }
    )
    replies = agent_replies(trace)
    context = AssertionContext(
        case=case, trace=trace, response=replies[-1] if replies else "", responses=replies
    )
    return [
        TraceCheck(
            id=result.id,
            type=result.type,
            verdict=result.verdict,
            reason=result.reason,
            message=result.message,
            span_id=result.span_id,
        )
        for result in evaluate(case, context).results
    ]


@dataclass(frozen=True)
class TraceChecksOutcome:
    """What ``seatrial traces check`` found over the traces it read."""

    traces: int
    """Traces checked."""
    failed_traces: list[str] = field(default_factory=list)
    """Ids of the traces on which some check failed."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per check id, how many traces gave each verdict (``pass``, ``fail``,
    ``not_evaluated``)."""


def check_stored_traces(
    store: Store, checks: Sequence[AssertionSpec], query: TraceQuery
) -> TraceChecksOutcome:
    """Run ``checks`` over the stored traces ``query`` selects and record each verdict."""
    heads = store.trace_heads(query)
    failed: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    for head in heads:
        found = check_trace(store.ingested_trace(head.trace_id), checks)
        store.record_trace_checks(head.trace_id, found)
        for check in found:
            by_verdict = counts.setdefault(check.id, {})
            by_verdict[check.verdict] = by_verdict.get(check.verdict, 0) + 1
        if any(check.verdict == "fail" for check in found):
            failed.append(head.trace_id)
    return TraceChecksOutcome(traces=len(heads), failed_traces=failed, counts=counts)
