"""What pytest shows for a case that did not pass: each failing attempt's verdict, its failed
assertions with their messages, and the trajectory of the first one (the lines ``seatrial
demo`` prints, from :func:`seatrial.report.trajectory_lines`)."""

from __future__ import annotations

from seatrial.record import CaseResult
from seatrial.report import assertion_lines, trajectory_lines

SHOWN_ATTEMPTS = 3
"""Failing attempts spelled out; the rest are counted (the report has them all)."""


def failure_text(result: CaseResult, run_id: str) -> str:
    """Why ``result`` did not pass, for pytest's failure output."""
    failing = [a for a in result.attempts if a.verdict in ("FAIL", "ERROR")]
    first = failing[0] if failing else result.attempts[0]
    kinds = ", ".join(dict.fromkeys(a.failure_type for a in failing if a.failure_type))
    category = f", category {result.category}" if result.category else ""
    # The first line is what pytest's short summary shows: the verdict and the first reason.
    lines = [
        f"{result.verdict}{f' ({kinds})' if kinds else ''} in {len(failing)} of "
        f"{len(result.attempts)} attempts: {first.reason}",
        f"case {result.case_id} ({result.priority}{category}) in run {run_id}",
    ]
    for attempt in failing[:SHOWN_ATTEMPTS]:
        kind = f" ({attempt.failure_type})" if attempt.failure_type else ""
        reasons = assertion_lines(attempt) if attempt.verdict == "FAIL" else []
        lines.append(f"attempt {attempt.attempt}: {attempt.verdict}{kind}")
        lines += [f"  {line}" for line in reasons] or [f"  {attempt.reason}"]
        if attempt.error and attempt.error not in attempt.reason:
            lines.append(f"  error: {attempt.error}")
    if len(failing) > SHOWN_ATTEMPTS:
        lines.append(f"... and {len(failing) - SHOWN_ATTEMPTS} more failing attempts")
    trajectory = trajectory_lines(first)
    if trajectory:
        lines.append(f"trajectory of attempt {first.attempt} (tool calls):")
        lines += trajectory
    lines.append(
        f"`seatrial report {run_id}` shows the run; "
        f"`seatrial rerun {run_id}:{result.case_id}` re-runs the case from its snapshot"
    )
    return "\n".join(lines)


def warning_text(result: CaseResult) -> str:
    """Why a case passed only with a WARNING: its attempts that did not pass, and why."""
    other = [a for a in result.attempts if a.verdict != "PASS"]
    lines = [
        f"WARNING {result.case_id}: passes with a warning ({len(other)} of "
        f"{len(result.attempts)} attempts did not pass)"
    ]
    lines += [f"attempt {a.attempt}: {a.verdict}: {a.reason}" for a in other[:SHOWN_ATTEMPTS]]
    return "\n".join(lines)
