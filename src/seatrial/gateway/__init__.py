"""The model gateway: one door for every model call, recorded, limited, priced, cached,
replayable, with faults on request.

:class:`Gateway` is the library entry point; :class:`GatewayServer` serves it as an
OpenAI-compatible proxy (``seatrial gateway serve``, ``seatrial run --gateway``).
"""

from seatrial.gateway._attempts import ATTEMPT_HEADER, AttemptBinding, AttemptRegistry
from seatrial.gateway._budget import Budget
from seatrial.gateway._cache import ResponseCache
from seatrial.gateway._cassette import Cassette
from seatrial.gateway._config import (
    BudgetConfig,
    CacheConfig,
    CassetteConfig,
    ComplexityRouting,
    FaultSpec,
    GatewayConfig,
    ModelConfig,
    Price,
    RoutingConfig,
    RoutingRule,
    TracingConfig,
)
from seatrial.gateway._cost import cost_usd, price_for
from seatrial.gateway._export import SpanExporter
from seatrial.gateway._fallback import fallback_chain, with_fallback
from seatrial.gateway._faults import FaultInjector
from seatrial.gateway._gateway import Gateway
from seatrial.gateway._limits import RateLimits, estimate_tokens
from seatrial.gateway._providers import Provider, close_providers, provider_for
from seatrial.gateway._proxy import PURPOSE_HEADER, ProxyApp, resolve_model
from seatrial.gateway._routing import RouteDecision, Router, complexity_score
from seatrial.gateway._server import GatewayServer
from seatrial.gateway._types import (
    CallAttempt,
    ChatChunk,
    ChatRequest,
    ChatResponse,
    EmbeddingRequest,
    EmbeddingResponse,
    Message,
    ToolCall,
    Usage,
)

__all__ = [
    "ATTEMPT_HEADER",
    "PURPOSE_HEADER",
    "AttemptBinding",
    "AttemptRegistry",
    "Budget",
    "BudgetConfig",
    "CacheConfig",
    "CallAttempt",
    "Cassette",
    "CassetteConfig",
    "ChatChunk",
    "ChatRequest",
    "ChatResponse",
    "ComplexityRouting",
    "EmbeddingRequest",
    "EmbeddingResponse",
    "FaultInjector",
    "FaultSpec",
    "Gateway",
    "GatewayConfig",
    "GatewayServer",
    "Message",
    "ModelConfig",
    "Price",
    "Provider",
    "ProxyApp",
    "RateLimits",
    "ResponseCache",
    "RouteDecision",
    "Router",
    "RoutingConfig",
    "RoutingRule",
    "SpanExporter",
    "ToolCall",
    "TracingConfig",
    "Usage",
    "close_providers",
    "complexity_score",
    "cost_usd",
    "estimate_tokens",
    "fallback_chain",
    "price_for",
    "provider_for",
    "resolve_model",
    "with_fallback",
]
