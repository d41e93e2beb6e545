"""Agent adapters (python, http, replay, model), sandbox tools and the permission policy.

``resolve_agent(spec)`` turns an ``--agent`` spec into an :class:`AgentAdapter`; the runner
calls ``check()`` once, then ``run(ctx)`` per attempt, then ``aclose()``.
"""

from seatrial.agent._errors import PERMISSION_DENIED, ToolDenied, ToolError
from seatrial.agent._faults import check_fault_support, fault_message
from seatrial.agent._http import HttpAgent
from seatrial.agent._model import ModelAgent
from seatrial.agent._model_tools import load_tools
from seatrial.agent._policy import WRITE_TOOLS, Decision, PermissionPolicy
from seatrial.agent._protocol import (
    AgentAdapter,
    AgentOutput,
    AttemptContext,
    FixedTurns,
    ModelHandle,
    UserTurns,
    content_hash,
)
from seatrial.agent._python import PythonAgent
from seatrial.agent._recorded import RecordedAgent
from seatrial.agent._resolve import resolve_agent
from seatrial.agent._retry import AgentRetry
from seatrial.agent._sandbox import EVENT_KINDS, SANDBOX_TOOLS, Sandbox
from seatrial.agent._session import ModelCallSpan, Session
from seatrial.agent._tool import ToolInfo, registered_tool, tool
from seatrial.agent._workspace import Workspace, prepare_workspace
from seatrial.case import ModelAgentSettings

__all__ = [
    "EVENT_KINDS",
    "PERMISSION_DENIED",
    "SANDBOX_TOOLS",
    "WRITE_TOOLS",
    "AgentAdapter",
    "AgentOutput",
    "AgentRetry",
    "AttemptContext",
    "Decision",
    "FixedTurns",
    "HttpAgent",
    "ModelAgent",
    "ModelAgentSettings",
    "ModelCallSpan",
    "ModelHandle",
    "PermissionPolicy",
    "PythonAgent",
    "RecordedAgent",
    "Sandbox",
    "Session",
    "ToolDenied",
    "ToolError",
    "ToolInfo",
    "UserTurns",
    "Workspace",
    "check_fault_support",
    "content_hash",
    "fault_message",
    "load_tools",
    "prepare_workspace",
    "registered_tool",
    "resolve_agent",
    "tool",
]
