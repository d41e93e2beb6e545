"""Python agents for the tool-fault tests: one repairs a failed call, one retries it
identically, one gives up. Each books a slot through ``book_slot``."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import seatrial
from seatrial.agent import Session, ToolError


@seatrial.tool(read_only=True)
def book_slot(date: str, period: Literal["morning", "afternoon"], note: str = "") -> dict[str, Any]:
    """Books a service slot."""
    return {"booked": True, "date": date, "period": period}


@seatrial.tool(read_only=True)
def find_slots(date: str) -> list[str]:
    """Lists the free periods of a day."""
    return ["morning", "afternoon"]


def _think(session: Session) -> None:
    # A model turn as the trace sees it: the recovery checks count these.
    with session.model_call("scripted-model") as call:
        call.report(input_tokens=10, output_tokens=5)


def _answer(session: Session, result: Any) -> str:
    if isinstance(result, dict) and result.get("booked"):
        return f"booked {result['date']} {result['period']}"
    return f"could not book: {result!r}"


def repairing(message: str, session: Session) -> str:
    """Books; after an error, thinks once and books again with a changed call."""
    _think(session)
    arguments: dict[str, Any] = {"date": "2026-12-01", "period": "morning"}
    for attempt in range(4):
        try:
            result = session.call_tool("book_slot", **arguments)
        except ToolError as error:
            _think(session)
            arguments = {**arguments, "note": f"retry {attempt + 1} after: {error}"[:40]}
            continue
        if result in ("", None) or isinstance(result, str):
            _think(session)
            arguments = {**arguments, "note": f"retry {attempt + 1}: bad result"}
            continue
        _think(session)
        return _answer(session, result)
    return "gave up"


def identical(message: str, session: Session) -> str:
    """Books; after an error, thinks and sends the very same call again (up to 5 tries)."""
    _think(session)
    for _ in range(5):
        try:
            result = session.call_tool("book_slot", date="2026-12-01", period="morning")
        except ToolError:
            _think(session)
            continue
        return _answer(session, result)
    return "gave up"


def gives_up(message: str, session: Session) -> str:
    """Books once; an error ends the conversation with an apology."""
    _think(session)
    try:
        result = session.call_tool("book_slot", date="2026-12-01", period="morning")
    except ToolError as error:
        _think(session)
        return f"sorry: {error}"
    return _answer(session, result)


def slow_repair(message: str, session: Session) -> str:
    """Looks at free slots for three model turns after a failure before booking again."""
    _think(session)
    try:
        return _answer(session, session.call_tool("book_slot", date="2026-12-01", period="morning"))
    except ToolError:
        pass
    for _ in range(3):
        _think(session)
        session.call_tool("find_slots", date="2026-12-01")
    result = session.call_tool("book_slot", date="2026-12-01", period="afternoon")
    return _answer(session, result)


def tells_faults(message: str, session: Session) -> str:
    """Calls ``book_slot`` once per line of the message and replies with what each answered
    (the error message, or the result as repr)."""
    answers = []
    for _ in message.splitlines():
        try:
            answers.append(
                repr(session.call_tool("book_slot", date="2026-12-01", period="morning"))
            )
        except ToolError as error:
            answers.append(f"{error.error_type}: {error}")
    return "\n".join(answers)


async def async_tells_faults(message: str, session: Session) -> str:
    """:func:`tells_faults` through ``call_tool_async``."""
    answers = []
    for _ in message.splitlines():
        try:
            result = await session.call_tool_async("book_slot", date="2026-12-01", period="morning")
            answers.append(repr(result))
        except ToolError as error:
            answers.append(f"{error.error_type}: {error}")
    return "\n".join(answers)


MISSING = re.compile(r"missing required parameter `(\w+)`")
ALLOWED = re.compile(r"`(\w+)` needs one of its allowed values.*?; allowed values: (.*?); call")
REFUSED = re.compile(r"is not an allowed value of `(\w+)`; allowed values: (.*?); call")
KNOWN = {"date": "2026-12-01", "period": "morning"}


def _obeyed(arguments: dict[str, Any], error: str) -> dict[str, Any]:
    """The call an error message asks for: the named parameter set, or given an allowed
    value; the same call after any other error (a transient one: send it again)."""
    missing = MISSING.search(error)
    if missing is not None:
        return {**arguments, missing.group(1): KNOWN[missing.group(1)]}
    allowed = REFUSED.search(error) or ALLOWED.search(error)
    if allowed is not None:
        return {**arguments, allowed.group(1): json.loads(allowed.group(2).split(", ")[0])}
    return arguments


def _obeying(session: Session, arguments: dict[str, Any], *, change_other: bool) -> str:
    _think(session)
    for attempt in range(4):
        try:
            result = session.call_tool("book_slot", **arguments)
        except (ToolError, TypeError) as error:
            _think(session)
            if change_other:
                arguments = {**arguments, "note": f"retry {attempt + 1}"}
            else:
                arguments = _obeyed(arguments, str(error))
            continue
        if result in ("", None) or isinstance(result, str):
            _think(session)  # an empty or malformed result: send the same call again
            continue
        _think(session)
        return _answer(session, result)
    return "gave up"


def obeys(message: str, session: Session) -> str:
    """Books with every parameter; after an error, does what its message says."""
    return _obeying(session, dict(KNOWN), change_other=False)


def forgets_date_and_obeys(message: str, session: Session) -> str:
    """Books without the date (a real missing parameter); obeys the error."""
    return _obeying(session, {"period": "morning"}, change_other=False)


def forgets_date_and_resends(message: str, session: Session) -> str:
    """Books without the date; after an error sends the very same call again."""
    _think(session)
    for _ in range(3):
        try:
            return _answer(session, session.call_tool("book_slot", period="morning"))
        except Exception:  # the fault's ToolError, then the tool's own TypeError
            _think(session)
    return "gave up"


def changes_the_note(message: str, session: Session) -> str:
    """Books; after an error changes only ``note``: a changed call that fixes nothing named."""
    return _obeying(session, dict(KNOWN), change_other=True)


def forgets_date_changes_the_note(message: str, session: Session) -> str:
    """Books without the date; after an error changes only ``note``."""
    return _obeying(session, {"period": "morning"}, change_other=True)
