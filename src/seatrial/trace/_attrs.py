"""Attribute and span names, in one place, and how ``seatrial.*`` event attributes are read.

Names under ``gen_ai.*`` and ``error.type`` come from the OpenTelemetry GenAI semantic
conventions; what the conventions lack lives under ``seatrial.*``.

An attribute of a ``seatrial.*`` span event may be written namespaced
(``seatrial.permission.tool``) or plainly (``tool``): an event's attributes are its own
namespace, and agents written outside this repository use either spelling. Every reader goes
through :func:`event_value`, so the two spellings can never be judged differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
TOOL_CALL_SOURCE = "seatrial.tool_call.source"
"""On an ``execute_tool`` span Seatrial made while reading a trace: where the call came from
(:data:`TOOL_CALL_FROM_MESSAGE`). Spans the agent exported do not carry it."""
TOOL_CALL_FROM_MESSAGE = "message"
"""The call was read from a model call's messages (a ``tool_call`` part), not from a span."""
ERROR_TYPE = "error.type"
PROVIDER_NAME = "gen_ai.provider.name"
INPUT_MESSAGES = "gen_ai.input.messages"
"""The messages a model call was sent, as OTel's input-messages JSON (``[{role, parts}]``)."""
OUTPUT_MESSAGES = "gen_ai.output.messages"
"""The model's answer, as OTel's output-messages JSON (``[{role, parts, finish_reason}]``)."""
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TOP_P = "gen_ai.request.top_p"
FINISH_REASONS = "gen_ai.response.finish_reasons"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
RESPONSE_ID = "gen_ai.response.id"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
"""The system prompt of a model call, as OTel's parts JSON (``[{type, content}]``)."""
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
"""The tools a model call was offered, as JSON."""
TOOL_TYPE = "gen_ai.tool.type"
INFERENCE_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
"""The span event that carries a model call's messages when content goes on events."""

# Older GenAI (and OpenLLMetry) spellings: read from ingested traces, never written.
LEGACY_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"
LEGACY_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"
LEGACY_SYSTEM = "gen_ai.system"
"""The provider, before ``gen_ai.provider.name``."""
LEGACY_PROMPT_PREFIX = "gen_ai.prompt."
"""OpenLLMetry's indexed input messages (``gen_ai.prompt.0.role``, ``.content`` ...)."""
LEGACY_COMPLETION_PREFIX = "gen_ai.completion."
"""OpenLLMetry's indexed output messages."""
LEGACY_USER_MESSAGE_EVENT = "gen_ai.user.message"
"""One span event per user message, its text under ``content`` (or ``gen_ai.content``)."""
LEGACY_EVENT_CONTENT = "gen_ai.content"
USER_ID = "user.id"
"""The end user a session belongs to (OTel's general ``user.id``)."""

OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
OP_TEXT_COMPLETION = "text_completion"
OP_EMBEDDINGS = "embeddings"
OP_RETRIEVAL = "retrieval"

COST_USD = "seatrial.cost_usd"
GATEWAY_PURPOSE = "seatrial.gateway.purpose"
"""Who a model call through the gateway was for: ``agent`` (the agent under test), or Seatrial
itself (``simulator``: a simulated user; ``judge``; ``generation``)."""
TURN_INDEX = "seatrial.turn.index"
EVENT_KIND = "seatrial.event.kind"
"""What a tool call does, for ``forbidden_events`` (e.g. ``network_request``)."""
FAULT = "seatrial.fault"
"""On a tool span: the fault injected in place of the tool's result (``http_500`` ...)."""
FAULT_CALL = "seatrial.fault.call"
"""On a tool span with a fault: the 1-based call of that tool in the attempt."""
FAULT_PARAMETER = "seatrial.fault.parameter"
"""On a tool span with a ``missing_param`` or ``bad_enum`` fault: the parameter its message
names, which the repairing call must set (or change)."""
FAULT_ALLOWED = "seatrial.fault.allowed"
"""On a tool span with a ``bad_enum`` fault: the values its message allows (a JSON list)."""
FAULT_REMOVED = "seatrial.fault.removed"
"""On a tool span with a ``missing_param`` fault: the parameter the fault took out of a call
that sent every required one (the tool, the trace and the model's conversation lack it)."""

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

AGENT_RETRY = "seatrial.agent_retry"
AGENT_RETRY_TRY = "seatrial.agent_retry.try"
AGENT_RETRY_REASON = "seatrial.agent_retry.reason"
AGENT_RETRY_WAIT_S = "seatrial.agent_retry.wait_s"

TURN = "seatrial.turn"
TURN_MESSAGE = "seatrial.turn.message"

SIMULATED_TURN = "seatrial.simulated_turn"
"""A user message written by the simulated user (``user_simulator``), not by the case."""
SIMULATED_TURN_INDEX = "seatrial.simulated_turn.index"
SIMULATED_TURN_MESSAGE = "seatrial.simulated_turn.message"

SIMULATOR_STOP = "seatrial.simulator_stop"
"""How the simulated user ended the conversation."""
SIMULATOR_STOP_REASON = "seatrial.simulator_stop.reason"
"""``stop_token``, ``max_turns``, ``empty`` (it wrote nothing), ``error`` (its call failed) or
``leak`` (its message gave a hidden fact away, and was not sent)."""
SIMULATOR_STOP_MESSAGE = "seatrial.simulator_stop.message"
"""Its last words with the stop token taken out (not sent to the agent), the error, or the
leaking message it wrote (not sent either)."""

EVENT_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    PERMISSION: (PERMISSION_TOOL, PERMISSION_SCOPE, PERMISSION_DECISION, PERMISSION_REASON),
    STATE_CHANGE: (STATE_TARGET, STATE_OP),
    SKILL: (SKILL_NAME,),
    TURN: (TURN_INDEX, TURN_MESSAGE),
    AGENT_RETRY: (AGENT_RETRY_TRY, AGENT_RETRY_REASON, AGENT_RETRY_WAIT_S),
    SIMULATED_TURN: (SIMULATED_TURN_INDEX, SIMULATED_TURN_MESSAGE),
    SIMULATOR_STOP: (SIMULATOR_STOP_REASON, SIMULATOR_STOP_MESSAGE),
}
"""Each ``seatrial.*`` span event and the namespaced names of its attributes."""


def seatrial_call(attributes: Mapping[str, Any]) -> bool:
    """A model call the gateway made for Seatrial itself (a simulated user's), not for the
    agent: the agent's model-call count, tokens and cost leave it out."""
    return attributes.get(GATEWAY_PURPOSE) not in (None, "agent")


def plain_name(key: str) -> str:
    """The plain spelling of an event attribute: ``tool`` for ``seatrial.permission.tool``."""
    return key.rsplit(".", 1)[-1]


def event_value(attributes: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """An event attribute under its namespaced name ``key``, else under its plain name.

    ``key`` is the namespaced constant (``PERMISSION_TOOL``); the namespaced spelling wins
    when an event carries both. Span attributes are read by their namespaced name only: a
    span's attributes share one namespace with ``gen_ai.*``, where ``name`` or ``tool`` would
    say nothing.
    """
    value = attributes.get(key)
    if value is None:
        value = attributes.get(plain_name(key))
    return default if value is None else value
