"""Attribute and span names, in one place.

Names under ``gen_ai.*`` and ``error.type`` come from the OpenTelemetry GenAI semantic
conventions; what the conventions lack lives under ``seatrial.*``.
"""

from __future__ import annotations

OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
CONVERSATION_ID = "gen_ai.conversation.id"
ERROR_TYPE = "error.type"

OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"

COST_USD = "seatrial.cost_usd"
TURN_INDEX = "seatrial.turn.index"
EVENT_KIND = "seatrial.event.kind"
"""What a tool call does, for ``forbidden_events`` (e.g. ``network_request``)."""

# Span events.
PERMISSION = "seatrial.permission"
PERMISSION_TOOL = "seatrial.permission.tool"
PERMISSION_SCOPE = "seatrial.permission.scope"
PERMISSION_DECISION = "seatrial.permission.decision"
PERMISSION_REASON = "seatrial.permission.reason"

STATE_CHANGE = "seatrial.state_change"
STATE_TARGET = "seatrial.state_change.target"
STATE_OP = "seatrial.state_change.op"

SKILL = "seatrial.skill"
SKILL_NAME = "seatrial.skill.name"

TURN = "seatrial.turn"
TURN_MESSAGE = "seatrial.turn.message"
