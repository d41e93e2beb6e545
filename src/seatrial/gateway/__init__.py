"""The model gateway: one door for every model call, recorded, limited, priced, cached,
replayable, with faults on request.

:class:`Gateway` is the library entry point; :class:`GatewayServer` serves it as an
OpenAI-compatible proxy (``seatrial gateway serve``, ``seatrial run --gateway``).

Names are imported on first use: reading ``seatrial.yaml`` needs only the configuration
models, not the SDKs and the web server the rest brings in.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        GatewaySettings,
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
    from seatrial.gateway._in_process import AttemptCalls, AttemptModel, RunGateway
    from seatrial.gateway._limits import RateLimits, estimate_tokens
    from seatrial.gateway._metrics import GatewayMetrics
    from seatrial.gateway._providers import Provider, ProviderPool, new_provider
    from seatrial.gateway._providers._base import unparsable_output
    from seatrial.gateway._proxy import PURPOSE_HEADER, ProxyApp, resolve_model
    from seatrial.gateway._routing import RouteDecision, Router, complexity_score
    from seatrial.gateway._server import GatewayServer, listening_socket
    from seatrial.gateway._types import (
        CallAttempt,
        ChatChunk,
        ChatRequest,
        ChatResponse,
        ChatToolCall,
        EmbeddingRequest,
        EmbeddingResponse,
        Message,
        Usage,
    )

_EXPORTS = {
    "ATTEMPT_HEADER": "seatrial.gateway._attempts",
    "AttemptBinding": "seatrial.gateway._attempts",
    "AttemptCalls": "seatrial.gateway._in_process",
    "AttemptModel": "seatrial.gateway._in_process",
    "AttemptRegistry": "seatrial.gateway._attempts",
    "Budget": "seatrial.gateway._budget",
    "BudgetConfig": "seatrial.gateway._config",
    "CacheConfig": "seatrial.gateway._config",
    "CallAttempt": "seatrial.gateway._types",
    "Cassette": "seatrial.gateway._cassette",
    "CassetteConfig": "seatrial.gateway._config",
    "ChatChunk": "seatrial.gateway._types",
    "ChatRequest": "seatrial.gateway._types",
    "ChatResponse": "seatrial.gateway._types",
    "ChatToolCall": "seatrial.gateway._types",
    "ComplexityRouting": "seatrial.gateway._config",
    "EmbeddingRequest": "seatrial.gateway._types",
    "EmbeddingResponse": "seatrial.gateway._types",
    "FaultInjector": "seatrial.gateway._faults",
    "FaultSpec": "seatrial.gateway._config",
    "Gateway": "seatrial.gateway._gateway",
    "GatewayConfig": "seatrial.gateway._config",
    "GatewayMetrics": "seatrial.gateway._metrics",
    "GatewaySettings": "seatrial.gateway._config",
    "GatewayServer": "seatrial.gateway._server",
    "Message": "seatrial.gateway._types",
    "ModelConfig": "seatrial.gateway._config",
    "PURPOSE_HEADER": "seatrial.gateway._proxy",
    "Price": "seatrial.gateway._config",
    "Provider": "seatrial.gateway._providers",
    "ProviderPool": "seatrial.gateway._providers",
    "ProxyApp": "seatrial.gateway._proxy",
    "RateLimits": "seatrial.gateway._limits",
    "ResponseCache": "seatrial.gateway._cache",
    "RouteDecision": "seatrial.gateway._routing",
    "Router": "seatrial.gateway._routing",
    "RoutingConfig": "seatrial.gateway._config",
    "RoutingRule": "seatrial.gateway._config",
    "RunGateway": "seatrial.gateway._in_process",
    "SpanExporter": "seatrial.gateway._export",
    "TracingConfig": "seatrial.gateway._config",
    "Usage": "seatrial.gateway._types",
    "complexity_score": "seatrial.gateway._routing",
    "cost_usd": "seatrial.gateway._cost",
    "estimate_tokens": "seatrial.gateway._limits",
    "fallback_chain": "seatrial.gateway._fallback",
    "listening_socket": "seatrial.gateway._server",
    "new_provider": "seatrial.gateway._providers",
    "unparsable_output": "seatrial.gateway._providers._base",
    "price_for": "seatrial.gateway._cost",
    "resolve_model": "seatrial.gateway._proxy",
    "with_fallback": "seatrial.gateway._fallback",
}

__all__ = [
    "ATTEMPT_HEADER",
    "PURPOSE_HEADER",
    "AttemptBinding",
    "AttemptCalls",
    "AttemptModel",
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
    "ChatToolCall",
    "ComplexityRouting",
    "EmbeddingRequest",
    "EmbeddingResponse",
    "FaultInjector",
    "FaultSpec",
    "Gateway",
    "GatewayConfig",
    "GatewayMetrics",
    "GatewayServer",
    "GatewaySettings",
    "Message",
    "ModelConfig",
    "Price",
    "Provider",
    "ProviderPool",
    "ProxyApp",
    "RateLimits",
    "ResponseCache",
    "RouteDecision",
    "Router",
    "RoutingConfig",
    "RoutingRule",
    "RunGateway",
    "SpanExporter",
    "TracingConfig",
    "Usage",
    "complexity_score",
    "cost_usd",
    "estimate_tokens",
    "fallback_chain",
    "listening_socket",
    "new_provider",
    "price_for",
    "resolve_model",
    "unparsable_output",
    "with_fallback",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.gateway' has no attribute {name!r}")
