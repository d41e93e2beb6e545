"""The gateway's live counters, served at ``GET /metrics`` in Prometheus's text format.

Each :class:`Gateway` owns a :class:`GatewayMetrics` with a registry of its own (never the
process-wide default registry): a process may run several gateways (a test session does),
and each must count only its own calls. Counters start at zero when the gateway starts, as
Prometheus expects of a counter; ``rate()`` and ``increase()`` handle the restart.

What is counted (chat completions; embeddings are not):

- every call once, by the model that answered (the routed one when none did), its provider
  and an outcome: ``ok`` (a provider answered), ``cache_hit``, ``replay`` (the cassette), or
  why it failed (``fallback_exhausted``, ``budget_exceeded``, ``rate_limit_timeout``,
  ``cassette_mismatch``, ``cancelled``, a provider error's kind, ``error``);
- every try of a provider inside a call (retries and fallbacks), by its outcome;
- calls answered by a fallback, cache hits and misses, waits for a model's rate limits;
- tokens, cost and latency of the calls a provider answered (cache hits and replays cost
  nothing and spent no tokens).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, Metric, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from seatrial.errors import FallbackExhausted, ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._types import CallAttempt, ChatResponse

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
"""Prometheus's text format 0.0.4: what every Prometheus version scrapes."""

LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Upper bounds (seconds) of the call latency histogram's buckets; +Inf is added."""

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def failure_outcome(exc: BaseException) -> str:
    """The ``outcome`` label of a call that failed with ``exc``: a provider error's kind,
    ``cancelled`` for a call the client gave up on, else the error class in snake case."""
    if isinstance(exc, ProviderError):
        return exc.kind
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    if isinstance(exc, Exception) and type(exc).__module__ == "seatrial.errors":
        return _CAMEL.sub("_", type(exc).__name__).lower()
    return "error"


class GatewayMetrics:
    """One gateway's counters and histogram, in :attr:`registry`."""

    def __init__(self, models: Mapping[str, ModelConfig]) -> None:
        self._providers = {name: model.provider for name, model in models.items()}
        self.registry = CollectorRegistry()
        """This gateway's registry; :meth:`exposition` renders it."""
        by_model = ["model", "provider"]
        self._calls = self._counter(
            "calls", "Chat calls through the gateway, by model and outcome.", [*by_model, "outcome"]
        )
        self._tries = self._counter(
            "provider_tries",
            "Tries of a provider inside calls (retries and fallbacks), by outcome.",
            [*by_model, "outcome"],
        )
        self._fallbacks = self._counter(
            "fallbacks",
            "Calls answered by a fallback model instead of the routed one.",
            ["model", "fallback"],
        )
        self._cache_hits = self._counter(
            "cache_hits", "Calls answered from the response cache.", ["model"]
        )
        self._cache_misses = self._counter(
            "cache_misses", "Calls that looked in the response cache and found nothing.", ["model"]
        )
        self._limit_waits = self._counter(
            "limit_waits", "Tries that waited for a model's rpm or tpm limit.", ["model"]
        )
        self._limit_wait_seconds = self._counter(
            "limit_wait_seconds", "Seconds tries waited for a model's rpm or tpm limit.", ["model"]
        )
        self._tokens = self._counter(
            "tokens", "Tokens of calls a provider answered, by type.", [*by_model, "type"]
        )
        self._cost = self._counter(
            "cost_usd", "Cost in US dollars of calls a provider answered.", by_model
        )
        self._latency = Histogram(
            "seatrial_gateway_call_duration_seconds",
            "Latency of calls a provider answered (retries, fallbacks and limit waits included).",
            by_model,
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )

    def _counter(self, name: str, documentation: str, labels: list[str]) -> Counter:
        return Counter(f"seatrial_gateway_{name}", documentation, labels, registry=self.registry)

    def _provider(self, model: str) -> str:
        return self._providers.get(model, "")

    def answered(self, routed: str, response: ChatResponse, mode: str | None) -> None:
        """Count a call that got ``response`` (``mode``: the cassette's ``replay`` or not)."""
        model, provider = response.model, response.provider or self._provider(response.model)
        if mode == "replay":
            outcome = "replay"
        elif response.cached:
            outcome = "cache_hit"
        else:
            outcome = "ok"
        self._calls.labels(model, provider, outcome).inc()
        if outcome != "ok":
            return
        self._count_tries(response.attempts)
        if response.fallback_used:
            self._fallbacks.labels(routed, model).inc()
        usage = response.usage
        self._tokens.labels(model, provider, "input").inc(usage.input_tokens)
        self._tokens.labels(model, provider, "output").inc(usage.output_tokens)
        self._cost.labels(model, provider).inc(response.cost_usd)
        self._latency.labels(model, provider).observe(response.latency_ms / 1000.0)

    def failed(self, routed: str, exc: BaseException) -> None:
        """Count a call routed to ``routed`` that ended with ``exc``."""
        self._calls.labels(routed, self._provider(routed), failure_outcome(exc)).inc()
        if isinstance(exc, FallbackExhausted):
            self._count_tries(a for a in exc.attempts if isinstance(a, CallAttempt))

    def _count_tries(self, tries: Iterable[CallAttempt]) -> None:
        for attempt in tries:
            self._tries.labels(attempt.model, self._provider(attempt.model), attempt.outcome).inc()

    def cache_lookup(self, model: str, hit: bool) -> None:
        """Count one look into the response cache for ``model``."""
        (self._cache_hits if hit else self._cache_misses).labels(model).inc()

    def limit_wait(self, model: str, seconds: float) -> None:
        """Count a try of ``model`` that waited ``seconds`` for its limits (0: none)."""
        if seconds > 0:
            self._limit_waits.labels(model).inc()
            self._limit_wait_seconds.labels(model).inc(seconds)

    def exposition(self) -> bytes:
        """Every counter in Prometheus's text format (:data:`CONTENT_TYPE`)."""
        return generate_latest(_WithoutCreated(self.registry))


class _WithoutCreated(Collector):
    """The registry's metrics less the ``_created`` series the client adds to each counter
    (OpenMetrics' start times): in the text format they are one more gauge per series, which
    Prometheus stores and nothing here reads."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            metric.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield metric
