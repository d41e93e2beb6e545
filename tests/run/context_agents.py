"""Agents that report, in their final state, what a run set around them while they ran."""

from __future__ import annotations

import gc
import os
import signal

from seatrial.agent import PermissionPolicy, Session
from seatrial.trace import TraceRecorder


def _observed(session: Session) -> dict[str, object]:
    return {
        "recorder_is_the_attempts": TraceRecorder.current() is session.recorder,
        "policy_is_the_attempts": PermissionPolicy.current() is session.policy,
        "has_gateway_url": session.gateway_url is not None,
        "gc_gen0": gc.get_threshold()[0],
        "sigterm_handled": signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None),
    }


def observe(message: str, session: Session) -> str:
    """Reports what it saw while it ran (a sync agent: it runs in a thread)."""
    session.final_state = _observed(session)
    return "seen"


async def observe_async(message: str, session: Session) -> str:
    """Reports what it saw while it ran (an async agent: it runs on the run's event loop)."""
    session.final_state = _observed(session)
    return "seen"


def sigterm_self(message: str, session: Session) -> str:
    """Sends SIGTERM to its own process, but only while the run handles it (else reports so:
    an unhandled SIGTERM would end the test process)."""
    session.final_state = _observed(session)
    if session.final_state["sigterm_handled"]:
        os.kill(os.getpid(), signal.SIGTERM)
    return "sent" if session.final_state["sigterm_handled"] else "not sent"
