"""One request and response type for every model call, whatever the provider."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Purpose = Literal["agent", "judge", "generation", "simulator"]
Role = Literal["system", "user", "assistant", "tool"]


class ChatToolCall(BaseModel):
    """A tool call the model asked for."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The provider's call id (echoed back in the ``tool`` message)."""
    name: str
    """The tool's name."""
    arguments: str
    """The arguments as the model wrote them: JSON text (possibly malformed)."""


class Message(BaseModel):
    """A chat message in OpenAI's shape (the adapters map other providers to and from it)."""

    model_config = ConfigDict(frozen=True)

    role: Role
    """system, user, assistant or tool."""
    content: str | list[dict[str, Any]] | None = None
    """Text, or OpenAI content parts; None for an assistant message with only tool calls."""
    tool_calls: list[ChatToolCall] = Field(default_factory=list)
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """For a ``tool`` message: the call it answers."""
    name: str | None = None
    """Optional participant name."""

    @property
    def text(self) -> str:
        """The message's text: its content, or the text of its content parts, joined."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):
            return "".join(str(part.get("text", "")) for part in self.content)
        return ""


class ChatRequest(BaseModel):
    """A chat completion request, plus who is asking and why."""

    model_config = ConfigDict(frozen=True)

    model: str | None = None
    """A configured model name; None lets the router choose."""
    messages: list[Message]
    """The conversation."""
    tools: list[dict[str, Any]] | None = None
    """Tool definitions in OpenAI's ``{"type": "function", "function": {...}}`` shape."""
    tool_choice: str | dict[str, Any] | None = None
    """``auto``, ``none``, ``required`` or a named function."""
    temperature: float | None = None
    """Sampling temperature."""
    max_tokens: int | None = None
    """Most output tokens."""
    seed: int | None = None
    """Sampling seed, where the provider honours one."""
    response_format: dict[str, Any] | None = None
    """e.g. ``{"type": "json_object"}`` or a JSON schema."""
    stream: bool = False
    """Stream the answer (the proxy streams to its client)."""
    purpose: Purpose = "agent"
    """Who calls: the agent under test, Seatrial's judge, case generation, or a simulated
    user."""
    task: str | None = None
    """Task type, for routing rules (e.g. ``summarize``, ``code``)."""
    run_id: str | None = None
    """The run this call belongs to (cost, cache, cassettes)."""
    case_id: str | None = None
    """The case."""
    attempt: int | None = None
    """The attempt (repeat) number."""
    cache: bool | None = None
    """Override the cache default for this call (judge on, agent off)."""


class Usage(BaseModel):
    """Tokens one call used."""

    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    output_tokens: int = 0
    """Completion tokens."""
    cached_input_tokens: int = 0
    """Prompt tokens the provider served from its prompt cache (cheaper where priced)."""


class CallAttempt(BaseModel):
    """One try within a call: which model, how it ended."""

    model: str
    """The configured model name tried."""
    outcome: str
    """``ok``, or what went wrong: ``timeout``, ``rate_limited``, ``server_error`` ..."""
    detail: str = ""
    """The error message (never a key)."""
    latency_ms: float = 0.0
    """How long the try took."""


class ChatResponse(BaseModel):
    """A chat completion, with what it cost and who answered."""

    message: Message
    """The assistant message (content and tool calls)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens used."""
    cost_usd: float = 0.0
    """Price of the call from the price table (0 when the model has no price)."""
    priced: bool = True
    """Whether the model that answered has a price (``prices.json`` or its ``price:``); False:
    ``cost_usd`` is 0 for want of one, not because the call was free."""
    model: str
    """The configured model name that answered."""
    provider: str = ""
    """``openai``, ``anthropic``, ``litellm`` or ``scripted``."""
    provider_model: str = ""
    """The model id the provider reported (the pinned version)."""
    finish_reason: str | None = None
    """``stop``, ``tool_calls``, ``length`` ..."""
    latency_ms: float = 0.0
    """Wall time of the whole call, fallbacks included."""
    cached: bool = False
    """Served from Seatrial's response cache."""
    fallback_used: bool = False
    """A model other than the first in the chain answered."""
    attempts: list[CallAttempt] = Field(default_factory=list)
    """Every try, in order."""
    fault: str | None = None
    """The injected fault, when one was."""
    route_rule: str | None = None
    """The routing rule that chose the model (``explicit`` when the request named one)."""
    limit_wait_ms: float = 0.0
    """Time spent waiting for RPM/TPM limits before the call could go."""

    @property
    def tool_calls(self) -> list[ChatToolCall]:
        """The tool calls the model asked for."""
        return self.message.tool_calls


class ChatChunk(BaseModel):
    """One piece of a streamed answer (OpenAI's delta shape)."""

    content: str | None = None
    """Text added by this chunk."""
    tool_call_index: int | None = None
    """Which tool call a tool-call fragment belongs to."""
    tool_call_id: str | None = None
    """The tool call's id (first fragment)."""
    tool_name: str | None = None
    """The tool's name (first fragment)."""
    arguments: str | None = None
    """A fragment of the tool call's JSON arguments."""
    finish_reason: str | None = None
    """Set on the last chunk."""
    usage: Usage | None = None
    """Set on the last chunk when the provider reports usage."""


class EmbeddingRequest(BaseModel):
    """Texts to embed."""

    model_config = ConfigDict(frozen=True)

    model: str | None = None
    """A configured model name."""
    input: list[str]
    """The texts."""
    purpose: Purpose = "judge"
    """Who asks."""
    run_id: str | None = None
    """The run, for cost."""


class EmbeddingResponse(BaseModel):
    """One vector per input text."""

    vectors: list[list[float]]
    """The embeddings, in input order."""
    model: str
    """The configured model name."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens used."""
    cost_usd: float = 0.0
    """Price of the call."""
    priced: bool = True
    """Whether the model has a price; False: ``cost_usd`` is 0 for want of one."""
    cached: bool = False
    """Served from the cache."""
    latency_ms: float = 0.0
    """Wall time."""
