"""Agents the tests drive through the python: adapter."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from seatrial.agent import Session


def echo(message: str, session: Session) -> str:
    """Repeats the message."""
    return f"you said: {message}"


async def async_echo(message: str, session: Session) -> str:
    """Repeats the message, asynchronously."""
    await asyncio.sleep(0)
    return f"you said: {message}"


def crash(message: str, session: Session) -> str:
    """Raises, like a buggy agent."""
    raise RuntimeError("the planner lost its state")


def crash_on_boom(message: str, session: Session) -> str:
    """Raises only on messages containing 'boom'."""
    if "boom" in message:
        raise ValueError("boom happened")
    return "fine"


async def slow(message: str, session: Session) -> str:
    """Takes far longer than any test timeout."""
    await asyncio.sleep(30)
    return "too late"


def logged(message: str, session: Session) -> str:
    """Appends one line per call to $SEATRIAL_TEST_LOG, then sleeps a little."""
    with open(os.environ["SEATRIAL_TEST_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{session.case_id} {session.attempt}\n")
    time.sleep(float(os.environ.get("SEATRIAL_TEST_SLEEP", "0")))
    return "logged"


def remember_user(message: str, session: Session) -> str:
    """Replies with the user and session ids it was given."""
    return f"{session.user_id} {session.session_id} {session.turn_index}"


def reads_workspace(message: str, session: Session) -> str:
    """Reads the file named in the message through the sandbox."""
    return str(session.call_tool("read_file", path=message.strip()))


def workspace_path(message: str, session: Session) -> str:
    """Reports its workspace folder, so a test can check it is fresh per attempt."""
    assert session.workspace is not None
    marker = Path(session.workspace) / "marker.txt"
    seen = marker.exists()
    marker.write_text("x", encoding="utf-8")
    return f"{session.workspace} seen={seen}"
