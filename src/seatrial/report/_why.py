"""Why an attempt did not pass, in plain lines: its failed assertions and its trajectory.

The demo's "why v2 fails", the pytest plugin's failure output and junit.xml all say it with
these lines, so a case reads the same wherever it fails.
"""

from __future__ import annotations

from seatrial.i18n import gettext as _
from seatrial.i18n import render
from seatrial.record import AttemptRecord


def assertion_lines(record: AttemptRecord) -> list[str]:
    """``ID [LEVEL] VERDICT: REASON`` for every assertion of ``record`` that did not pass
    (failed, or could not be evaluated)."""
    return [
        f"{r.id} [{r.level}] {r.verdict}: {render(r.message, r.reason)}"
        for r in record.assertions
        if r.verdict != "pass"
    ]


def trajectory_lines(record: AttemptRecord) -> list[str]:
    """The tool calls of an attempt, one line per step that matters.

    Identical calls in a row with the same outcome fold into one line (``x8``); a multi-turn
    attempt gets a ``turn N`` line where each turn's calls start. Empty without a trace. The
    words (``ok``, ``FAILED``, ``turn``) are in the reader's language; names and arguments as
    called.
    """
    lines: list[str] = []
    trace = record.trace
    if trace is None:
        return lines
    calls = trace.tool_calls()
    index = 0
    turn: int | None = None
    while index < len(calls):
        call = calls[index]
        if call.turn is not None and call.turn != turn and len(record.responses) > 1:
            turn = call.turn
            lines.append("  " + _("turn {number}").format(number=turn + 1))
        same = 1
        while (
            index + same < len(calls)
            and calls[index + same].name == call.name
            and calls[index + same].arguments == call.arguments
            and calls[index + same].success == call.success
        ):
            same += 1
        mark = _("ok") if call.success else _("FAILED ({error})").format(error=call.error_type)
        times = f" x{same}" if same > 1 else ""
        lines.append(f"    {call.name}({_args(call.arguments)}) {mark}{times}")
        index += same
    return lines


def _args(arguments: object) -> str:
    # A written file's content would drown the line; the path says which call it was.
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={v!r}"[:60] for k, v in arguments.items() if k != "content")
    return ""
