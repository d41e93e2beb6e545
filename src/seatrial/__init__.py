"""Seatrial: regression-test and evaluate LLM agents.

The public names below are imported lazily, so ``import seatrial.trace`` stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from seatrial._version import __version__

_EXPORTS = {
    "AgentOutput": "seatrial.agent",
    "Case": "seatrial.case",
    "SeatrialError": "seatrial.errors",
    "Session": "seatrial.agent",
    "Suite": "seatrial.case",
    "SuiteRun": "seatrial._execute",
    "ToolDenied": "seatrial.agent",
    "ToolError": "seatrial.agent",
    "execute_suite": "seatrial._execute",
    "execute_suite_async": "seatrial._execute",
    "load_suite": "seatrial.case",
    "rerun_attempt": "seatrial._execute",
    "rerun_attempt_async": "seatrial._execute",
    "run_suite": "seatrial._api",
    "run_suite_async": "seatrial._api",
    "tool": "seatrial.agent",
}

__all__ = [
    "AgentOutput",
    "Case",
    "SeatrialError",
    "Session",
    "Suite",
    "SuiteRun",
    "ToolDenied",
    "ToolError",
    "__version__",
    "execute_suite",
    "execute_suite_async",
    "load_suite",
    "rerun_attempt",
    "rerun_attempt_async",
    "run_suite",
    "run_suite_async",
    "tool",
]

if TYPE_CHECKING:
    from seatrial._api import run_suite, run_suite_async
    from seatrial._execute import (
        SuiteRun,
        execute_suite,
        execute_suite_async,
        rerun_attempt,
        rerun_attempt_async,
    )
    from seatrial.agent import AgentOutput, Session, ToolDenied, ToolError, tool
    from seatrial.case import Case, Suite, load_suite
    from seatrial.errors import SeatrialError


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial' has no attribute {name!r}")
