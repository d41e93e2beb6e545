"""The public API is what the docs say it is."""

from __future__ import annotations

import seatrial

DOCUMENTED = [
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


def test_top_level_exports_are_the_documented_ones():
    assert seatrial.__all__ == DOCUMENTED


def test_every_exported_name_resolves():
    for name in seatrial.__all__:
        assert getattr(seatrial, name) is not None
