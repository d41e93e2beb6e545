"""``GET /metrics`` of the gateway: real calls through the proxy to FakeOpenAI upstreams, the
counters read back with the Prometheus client's own text parser."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from seatrial.gateway import Gateway, GatewayConfig, GatewayServer, ModelConfig, Price
from seatrial.testing import FakeOpenAI, FakeReply

KEY_ENV = "SEATRIAL_TEST_METRICS_KEY"
PRICE = Price(input_per_mtok=2.0, output_per_mtok=8.0)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-metrics-test-key")


def model(name: str, upstream: FakeOpenAI, **fields: Any) -> ModelConfig:
    return ModelConfig(
        name=name,
        model=f"{name}-2024-08-06",
        base_url=upstream.base_url,
        api_key_env=KEY_ENV,
        price=PRICE,
        **fields,
    )


@asynccontextmanager
async def serving(config: GatewayConfig) -> AsyncIterator[tuple[GatewayServer, httpx.AsyncClient]]:
    gateway = Gateway(config)
    try:
        async with GatewayServer(gateway) as server, httpx.AsyncClient(timeout=30) as client:
            yield server, client
    finally:
        await gateway.aclose()


async def ask(
    client: httpx.AsyncClient, server: GatewayServer, model: str, text: str, purpose: str
) -> httpx.Response:
    return await client.post(
        f"{server.base_url}/chat/completions",
        json={"model": model, "messages": [{"role": "user", "content": text}]},
        headers={"x-seatrial-purpose": purpose},
    )


async def scrape(client: httpx.AsyncClient, server: GatewayServer) -> dict[tuple[Any, ...], float]:
    """Every sample of ``/metrics`` as ``(name, (label, value), ...) -> value``."""
    answer = await client.get(f"{server.url}/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, *sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def sample(name: str, **labels: str) -> tuple[Any, ...]:
    return (name, *sorted(labels.items()))


async def test_metrics_count_calls_fallbacks_cache_hits_tries_tokens_and_failures() -> None:
    primary_replies = [FakeReply(status=500), FakeReply("fine", input_tokens=7, output_tokens=3)]
    with (
        FakeOpenAI(primary_replies) as primary,
        FakeOpenAI(FakeReply("from backup", input_tokens=100, output_tokens=20)) as spare,
        FakeOpenAI(FakeReply(status=400)) as refusing,
    ):
        config = GatewayConfig(
            models={
                "main": model("main", primary, max_retries=0, fallbacks=["backup"]),
                "backup": model("backup", spare),
                "strict": model("strict", refusing),
            }
        )
        async with serving(config) as (server, client):
            # A judge call (cached by default): main answers 500, backup answers; the same
            # question again comes from the cache; an agent call (never cached) gets main.
            first = await ask(client, server, "main", "is this right?", "judge")
            again = await ask(client, server, "main", "is this right?", "judge")
            agent = await ask(client, server, "main", "hello", "agent")
            refused = await ask(client, server, "strict", "hello", "agent")
            found = await scrape(client, server)

    assert [first.status_code, again.status_code, agent.status_code] == [200, 200, 200]
    assert refused.status_code == 400
    calls = "seatrial_gateway_calls_total"
    assert found[sample(calls, model="backup", provider="openai", outcome="ok")] == 1
    assert found[sample(calls, model="backup", provider="openai", outcome="cache_hit")] == 1
    assert found[sample(calls, model="main", provider="openai", outcome="ok")] == 1
    assert (
        found[sample(calls, model="strict", provider="openai", outcome="fallback_exhausted")] == 1
    )
    assert sum(v for k, v in found.items() if k[0] == calls) == 4
    assert found[sample("seatrial_gateway_fallbacks_total", model="main", fallback="backup")] == 1
    assert sum(v for k, v in found.items() if k[0] == "seatrial_gateway_fallbacks_total") == 1
    # Only the judge calls looked into the cache: one miss, then one hit.
    assert found[sample("seatrial_gateway_cache_hits_total", model="main")] == 1
    assert found[sample("seatrial_gateway_cache_misses_total", model="main")] == 1
    tries = "seatrial_gateway_provider_tries_total"
    assert found[sample(tries, model="main", provider="openai", outcome="server_error")] == 1
    assert found[sample(tries, model="backup", provider="openai", outcome="ok")] == 1
    assert found[sample(tries, model="main", provider="openai", outcome="ok")] == 1
    assert found[sample(tries, model="strict", provider="openai", outcome="bad_request")] == 1
    tokens = "seatrial_gateway_tokens_total"
    # The cache hit spent nothing: backup's tokens are those of its one answer.
    assert found[sample(tokens, model="backup", provider="openai", type="input")] == 100
    assert found[sample(tokens, model="backup", provider="openai", type="output")] == 20
    assert found[sample(tokens, model="main", provider="openai", type="input")] == 7
    cost = found[sample("seatrial_gateway_cost_usd_total", model="backup", provider="openai")]
    assert cost == pytest.approx((100 * 2.0 + 20 * 8.0) / 1e6)
    latency = "seatrial_gateway_call_duration_seconds_count"
    assert found[sample(latency, model="backup", provider="openai")] == 1
    assert found[sample(latency, model="main", provider="openai")] == 1
    bucket = "seatrial_gateway_call_duration_seconds_bucket"
    assert found[sample(bucket, model="main", provider="openai", le="+Inf")] == 1
    assert not any(k[0].endswith("_created") for k in found)
    # No rate limits configured: no try waited.
    assert not any(k[0] == "seatrial_gateway_limit_waits_total" for k in found)


async def test_a_call_that_waits_for_the_rate_limit_is_counted_with_its_wait() -> None:
    with FakeOpenAI(FakeReply("ok", input_tokens=1, output_tokens=1)) as upstream:
        # 100 requests a minute: one at a time, the next 0.6 s later.
        config = GatewayConfig(models={"paced": model("paced", upstream, rpm=100)})
        async with serving(config) as (server, client):
            await ask(client, server, "paced", "one", "agent")
            await ask(client, server, "paced", "two", "agent")
            found = await scrape(client, server)
    assert found[sample("seatrial_gateway_limit_waits_total", model="paced")] == 1
    assert found[sample("seatrial_gateway_limit_wait_seconds_total", model="paced")] > 0


async def test_each_gateway_counts_only_its_own_calls() -> None:
    with FakeOpenAI(FakeReply("ok", input_tokens=1, output_tokens=1)) as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with serving(config) as (busy, client), serving(config) as (idle, _):
            await ask(client, busy, "main", "hi", "agent")
            busy_found = await scrape(client, busy)
            idle_found = await scrape(client, idle)
    ok = sample("seatrial_gateway_calls_total", model="main", provider="openai", outcome="ok")
    assert busy_found[ok] == 1
    assert ok not in idle_found
