"""Agents ``seatrial bench`` ranks in tests: each answers ``done`` on the cases it can do."""

from __future__ import annotations

import seatrial
from seatrial.agent import Session


@seatrial.tool(read_only=True)
def look_up(case: str) -> str:
    """A tool that fails on odd-numbered cases."""
    if int(case.rsplit("-", 1)[1]) % 2:
        raise LookupError(f"nothing found for {case}")
    return f"found {case}"


def _answer(session: Session, done: bool) -> str:
    # One priced model call per turn, so the board has tokens and a cost per success.
    with session.model_call("scripted", provider="scripted") as call:
        call.report(input_tokens=100, output_tokens=20, cost_usd=0.002)
    return "done" if done else "gave up"


def steady(message: str, session: Session) -> str:
    """Does every case."""
    return _answer(session, True)


def half(message: str, session: Session) -> str:
    """Does the even-numbered cases only, after looking each case up (odd ones fail)."""
    try:
        look_up(message)
    except LookupError:
        return _answer(session, False)
    return _answer(session, True)


def all_but_case_3(message: str, session: Session) -> str:
    """Does every case but case-3."""
    return _answer(session, message != "case-3")
