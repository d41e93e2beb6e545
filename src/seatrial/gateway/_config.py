"""Gateway configuration: ``models:`` and ``gateway:`` in ``seatrial.yaml``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from seatrial.i18n import gettext as _

ProviderName = Literal["openai", "anthropic", "litellm", "scripted"]


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0)
    """Price of a million input tokens."""
    output_per_mtok: float = Field(ge=0)
    """Price of a million output tokens."""
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    """Price of a million input tokens served from the provider's prompt cache, where it has
    one; None means the input price."""


class ModelConfig(BaseModel):
    """One model Seatrial may call, under a name of the user's choosing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The name requests and fallbacks use, e.g. ``judge`` or ``gpt4o``."""
    provider: ProviderName = "openai"
    """``openai`` (any OpenAI-compatible endpoint), ``anthropic``, ``litellm``, or
    ``scripted`` (answers from a ``seatrial.testing.ScriptedModel`` in the process, for tests)."""
    model: str
    """The pinned model id sent upstream, e.g. ``gpt-4o-2024-08-06``."""
    family: str | None = None
    """Model family (e.g. ``gpt-4o``), so a judge of the agent's own family can be refused."""
    base_url: str | None = None
    """The endpoint (OpenAI-compatible servers: vLLM, Ollama, DeepSeek ...); for a
    ``scripted`` model, ``python:module:NAME`` naming its ``ScriptedModel``."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    price: Price | None = None
    """Overrides the shipped price table for this model."""
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute allowed."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute allowed."""
    fallbacks: list[str] = Field(default_factory=list)
    """Names of models to try, in order, when this one fails."""
    first_byte_timeout_s: float = Field(default=3.0, gt=0)
    """Fast-fail: seconds to a streamed answer's first chunk when this model is the primary.
    A whole (non-streamed) answer arrives all at once, so only ``timeout_s`` bounds it."""
    timeout_s: float = Field(default=30.0, gt=0)
    """Seconds a call may take when this model is a fallback (and the primary's total)."""
    max_retries: int = Field(default=2, ge=0)
    """Retries with backoff on HTTP 429 and 5xx before moving to the next model."""
    embedding: bool = False
    """This model makes embeddings."""

    @model_validator(mode="after")
    def _script_is_python(self) -> ModelConfig:
        if (
            self.provider == "scripted"
            and self.base_url
            and not self.base_url.startswith("python:")
        ):
            raise ValueError(
                _(
                    "model `{name}` is scripted, so `base_url` names its script: write "
                    "python:module:NAME (or python:path/to/file.py:NAME) for a ScriptedModel"
                ).format(name=self.name)
            )
        return self


class RoutingRule(BaseModel):
    """Send matching requests to a model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Recorded with every decision it makes."""
    model: str
    """The model name to use."""
    task: str | None = None
    """Matches requests whose ``task`` equals this."""
    keywords: list[str] = Field(default_factory=list)
    """Matches requests whose last user message contains any of these (case-insensitive)."""
    classifier: str | None = None
    """``python:module:function`` taking the request, returning True to match."""

    @model_validator(mode="after")
    def _has_condition(self) -> RoutingRule:
        if not (self.task or self.keywords or self.classifier):
            raise ValueError(_("a routing rule needs `task`, `keywords` or `classifier`"))
        return self


class ComplexityRouting(BaseModel):
    """Escalate hard requests and downgrade easy ones: cheap where a small model will do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scorer: str | None = None
    """``python:module:function`` returning 0..1; default: a score from length, turns,
    tools and code in the request."""
    escalate_above: float | None = Field(default=None, ge=0, le=1)
    """Scores above this go to ``escalate_to``."""
    escalate_to: str | None = None
    """The stronger model."""
    downgrade_below: float | None = Field(default=None, ge=0, le=1)
    """Scores below this go to ``downgrade_to``."""
    downgrade_to: str | None = None
    """The cheaper model."""


class RoutingConfig(BaseModel):
    """How a model is chosen when a request names none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: str | None = None
    """The model when no rule matches."""
    rules: list[RoutingRule] = Field(default_factory=list)
    """Tried in order; the first match wins."""
    complexity: ComplexityRouting | None = None
    """Applied after the rules (or the default) chose a model."""


class BudgetConfig(BaseModel):
    """Spending limits; a warning at ``warn_at`` of a limit, new calls stopped at it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_usd: float | None = Field(default=None, gt=0)
    """Most a run may spend on model calls (agent, judge, generation and simulator together)."""
    project_usd: float | None = Field(default=None, gt=0)
    """Most the whole store may have spent."""
    warn_at: float = Field(default=0.8, gt=0, le=1)
    """Share of a limit at which a warning is given."""


class CacheConfig(BaseModel):
    """Response cache defaults per purpose."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: bool = True
    """Cache judge calls (the same question gets the same verdict)."""
    generation: bool = True
    """Cache case-generation calls."""
    agent: bool = False
    """Cache the agent's own calls (off: a cached answer hides the agent's variance)."""
    simulator: bool = False
    """Cache simulated users' calls (off: the simulator's own variance is measured, not
    hidden)."""
    share_across_repeats: bool = False
    """Let repeats of one case share cached agent answers (almost never what you want)."""
    ttl_s: float | None = Field(default=None, gt=0)
    """Entries older than this are ignored; None keeps them."""


FaultKind = Literal["latency", "timeout", "http_429", "http_500", "empty", "malformed_tool_call"]


class FaultSpec(BaseModel):
    """A fault to inject into model calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FaultKind
    """What to inject."""
    model: str | None = None
    """Only calls to this model name."""
    case_id: str | None = None
    """Only calls made while this case runs."""
    call: int | None = Field(default=None, ge=1)
    """Only the Nth call of an attempt (1-based)."""
    probability: float | None = Field(default=None, ge=0, le=1)
    """Inject with this probability (seeded, reproducible)."""
    latency_ms: float = Field(default=0, ge=0)
    """Added delay for ``latency`` (and how long ``timeout`` hangs before failing)."""


class CassetteConfig(BaseModel):
    """Recording and replaying model answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["off", "record", "replay"] = "off"
    """record every request and response, or serve them back."""
    match: Literal["strict", "lenient"] = "strict"
    """strict: a request must equal the recorded one; lenient: match by position in the attempt."""
    path: str | None = None
    """Cassette folder; default ``.seatrial/cassettes``."""


class TracingConfig(BaseModel):
    """Exporting gateway spans to an OpenTelemetry collector."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    otlp_endpoint: str | None = None
    """OTLP/HTTP traces endpoint, e.g. ``http://127.0.0.1:4318/v1/traces``; None: no export."""
    sample_rate: float = Field(default=0.05, ge=0, le=1)
    """Share of successful calls exported; every failed call is exported."""


class GatewaySettings(BaseModel):
    """The ``gateway:`` section: everything about model calls but the models themselves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    """Model choice for requests that name none (default, rules, complexity)."""
    budgets: BudgetConfig = Field(default_factory=BudgetConfig)
    """Spending limits per run and per project."""
    cache: CacheConfig = Field(default_factory=CacheConfig)
    """Response cache defaults per purpose."""
    cassette: CassetteConfig = Field(default_factory=CassetteConfig)
    """Recording and replaying model answers."""
    faults: list[FaultSpec] = Field(default_factory=list)
    """Faults to inject into model calls."""
    fault_seed: int = 0
    """Seed for probabilistic faults (and trace sampling)."""
    redis_url: str | None = Field(default=None, repr=False)
    """Share rate limits across processes through this Redis."""
    max_limit_wait_s: float = Field(default=10.0, ge=0)
    """Longest a call waits for its rate limit before failing."""
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    """OTLP export of gateway spans."""


class GatewayConfig(BaseModel):
    """Everything the gateway needs: models plus the ``gateway:`` section."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: dict[str, ModelConfig] = Field(default_factory=dict)
    """Configured models by name."""
    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    """Model choice for requests that name none."""
    budgets: BudgetConfig = Field(default_factory=BudgetConfig)
    """Spending limits."""
    cache: CacheConfig = Field(default_factory=CacheConfig)
    """Response cache."""
    cassette: CassetteConfig = Field(default_factory=CassetteConfig)
    """Record / replay."""
    faults: list[FaultSpec] = Field(default_factory=list)
    """Faults to inject."""
    fault_seed: int = 0
    """Seed for probabilistic faults."""
    redis_url: str | None = Field(default=None, repr=False)
    """Share rate limits across processes through Redis (on Celery workers, the broker's
    when unset); kept out of ``repr``, as a Redis URL may carry a password."""
    max_limit_wait_s: float = Field(default=10.0, ge=0)
    """Longest a call waits for its rate limit before failing."""
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    """OTLP export."""

    @model_validator(mode="after")
    def _names_exist(self) -> GatewayConfig:
        known = set(self.models)
        named = [f for m in self.models.values() for f in m.fallbacks]
        named += [r.model for r in self.routing.rules]
        named += [n for n in (self.routing.default,) if n]
        if self.routing.complexity is not None:
            c = self.routing.complexity
            named += [n for n in (c.escalate_to, c.downgrade_to) if n]
        unknown = sorted({n for n in named if n not in known})
        if unknown:
            raise ValueError(
                _("unknown model name(s) {names}; configure them under `models:`").format(
                    names=", ".join(unknown)
                )
            )
        return self
