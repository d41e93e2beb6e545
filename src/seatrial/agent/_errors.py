"""Errors a tool raises to the agent under test; agents catch them and carry on.

::

    SeatrialError
    └── ToolError        a tool call failed (missing file, path outside the workspace ...)
        └── ToolDenied   the permission policy refused the call
"""

from __future__ import annotations

from typing import Any

from seatrial.errors import SeatrialError

PERMISSION_DENIED = "permission_denied"
"""``error.type`` of a tool call the permission policy refused."""


class ToolError(SeatrialError):
    """A tool call failed; ``error_type`` is what the trace records as ``error.type``.

    ``arguments``, when set, are the call as the tool received it, where that differs from
    what was sent (an injected ``missing_param`` fault took a parameter out): a ``model:``
    agent shows its model the call that way.
    """

    def __init__(
        self,
        message: str,
        error_type: str = "tool_error",
        *,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        self.error_type = error_type
        self.arguments = arguments
        super().__init__(message)


class ToolDenied(ToolError):
    """The permission policy refused a tool call; the refusal is in the trace.

    ``scope`` is what decided it (``once``, ``deny``, ``allowed_tools``, ``production``).
    """

    def __init__(self, tool: str, scope: str, reason: str) -> None:
        self.tool = tool
        self.scope = scope
        self.reason = reason
        super().__init__(
            f"permission denied for `{tool}`: {reason}; do without this tool or ask the user",
            PERMISSION_DENIED,
        )
