"""``tool_faults:`` of a case: a fault put into a tool's result at its Nth call, to test
whether the agent repairs its call (tool-contract tests)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal["missing_param", "bad_enum", "http_500", "timeout", "malformed_json", "empty"]
"""What the tool answers instead of its result."""


class ToolFault(BaseModel):
    """One injected fault: ``{tool: book, fault: http_500, at_call: 1}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1)
    """The tool whose result is replaced."""
    fault: FaultKind
    """What it answers instead."""
    at_call: int = Field(default=1, ge=1)
    """The 1-based call of that tool (in the attempt) that gets the fault."""
    times: int = Field(default=1, ge=1)
    """How many calls in a row, from ``at_call``, get it."""
