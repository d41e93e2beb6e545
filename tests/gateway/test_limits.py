"""Rate limits: RPM and TPM per model, bounded waits, one budget shared through Redis."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
import redis

from seatrial.errors import GatewayError, RateLimitTimeout
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._limits import RateLimits, estimate_tokens
from seatrial.gateway._types import ChatRequest, ChatToolCall, Message

REDIS_URL = "redis://127.0.0.1:6379/0"


def models(rpm: int | None = None, tpm: int | None = None) -> dict[str, ModelConfig]:
    return {
        "limited": ModelConfig(name="limited", model="gpt-4o-mini", rpm=rpm, tpm=tpm),
        "free": ModelConfig(name="free", model="llama3"),
    }


@pytest.fixture
def redis_namespace() -> Iterator[str]:
    """A fresh key namespace on the local Redis, removed afterwards; skips when Redis is down."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        client.close()
        pytest.skip("Redis is not running on 127.0.0.1:6379; start redis-server to run this test")
    namespace = f"seatrial-test-{uuid.uuid4().hex}"
    try:
        yield namespace
    finally:
        for key in client.scan_iter(f"{namespace}:*"):
            client.delete(key)
        client.close()


async def test_model_without_limits_never_waits() -> None:
    limits = RateLimits(models(rpm=60))

    waits = [await limits.acquire("free", 100_000) for _ in range(50)]

    assert waits == [0.0] * 50


async def test_calls_beyond_one_seconds_worth_of_rpm_wait_instead_of_failing() -> None:
    limits = RateLimits(models(rpm=600), max_wait_s=5)

    at_once = [await limits.acquire("limited", 1) for _ in range(10)]
    paced = await limits.acquire("limited", 1)

    assert at_once == [0.0] * 10
    assert paced > 0


async def test_a_wait_longer_than_max_wait_raises_rate_limit_timeout_naming_the_fix() -> None:
    limits = RateLimits(models(rpm=60), max_wait_s=0.5)
    await limits.acquire("limited", 1)

    with pytest.raises(RateLimitTimeout) as caught:
        await limits.acquire("limited", 1)

    message = str(caught.value)
    assert "`limited` is at its rpm limit (60/min)" in message
    assert "max_limit_wait_s" in message


async def test_concurrent_callers_never_get_more_than_the_limit_allows() -> None:
    # rpm=120: two may go at once, then one every 0.5 s; within 0.75 s only a third fits.
    limits = RateLimits(models(rpm=120), max_wait_s=0.75)

    outcomes = await asyncio.gather(
        *(limits.acquire("limited", 1) for _ in range(5)), return_exceptions=True
    )

    assert sorted(o for o in outcomes if isinstance(o, float))[:2] == [0.0, 0.0]
    assert sum(isinstance(o, float) for o in outcomes) == 3
    assert sum(isinstance(o, RateLimitTimeout) for o in outcomes) == 2


async def test_tpm_charges_each_call_its_tokens() -> None:
    limits = RateLimits(models(tpm=6000), max_wait_s=0.5)

    at_once = await limits.acquire("limited", 6000)  # a full bucket: a whole minute's tokens
    short_wait = await limits.acquire("limited", 10)
    with pytest.raises(RateLimitTimeout, match="tpm limit \\(6000/min\\)"):
        await limits.acquire("limited", 100)

    assert at_once == 0.0
    assert short_wait > 0


async def test_a_call_estimated_above_tpm_waits_for_a_full_bucket_rather_than_never_going() -> None:
    limits = RateLimits(models(tpm=600), max_wait_s=0.5)

    await limits.acquire("limited", 5000)
    with pytest.raises(RateLimitTimeout):
        await limits.acquire("limited", 600)


async def test_rpm_and_tpm_both_apply() -> None:
    limits = RateLimits(models(rpm=6000, tpm=60), max_wait_s=0.5)

    await limits.acquire("limited", 60)
    with pytest.raises(RateLimitTimeout, match="tpm"):
        await limits.acquire("limited", 60)


async def test_unknown_model_is_an_error() -> None:
    with pytest.raises(GatewayError, match="unknown model `nope`.*free, limited"):
        await RateLimits(models(rpm=60)).acquire("nope", 1)


async def test_in_memory_limits_belong_to_one_instance() -> None:
    first, second = RateLimits(models(rpm=60)), RateLimits(models(rpm=60))

    await first.acquire("limited", 1)

    assert await second.acquire("limited", 1) == 0.0


async def test_redis_limits_are_one_budget_shared_between_instances(redis_namespace: str) -> None:
    # Two RateLimits on one Redis stand for two processes of one project.
    first = RateLimits(models(rpm=60), REDIS_URL, max_wait_s=0.5, namespace=redis_namespace)
    second = RateLimits(models(rpm=60), REDIS_URL, max_wait_s=0.5, namespace=redis_namespace)
    try:
        await first.acquire("limited", 1)
        with pytest.raises(RateLimitTimeout, match="rpm limit"):
            await second.acquire("limited", 1)
        with pytest.raises(RateLimitTimeout):
            await first.acquire("limited", 1)
    finally:
        await first.aclose()
        await second.aclose()


async def test_redis_tpm_is_shared_and_a_short_wait_is_waited_out(redis_namespace: str) -> None:
    first = RateLimits(models(tpm=6000), REDIS_URL, max_wait_s=2, namespace=redis_namespace)
    second = RateLimits(models(tpm=6000), REDIS_URL, max_wait_s=2, namespace=redis_namespace)
    try:
        await first.acquire("limited", 6000)
        waited = await second.acquire("limited", 20)
        with pytest.raises(RateLimitTimeout, match="tpm"):
            await first.acquire("limited", 3000)
    finally:
        await first.aclose()
        await second.aclose()

    assert waited > 0


async def test_redis_namespaces_keep_budgets_apart(redis_namespace: str) -> None:
    first = RateLimits(models(rpm=60), REDIS_URL, namespace=redis_namespace)
    other = RateLimits(models(rpm=60), REDIS_URL, namespace=f"{redis_namespace}:other")
    try:
        await first.acquire("limited", 1)
        assert await other.acquire("limited", 1) == 0.0
    finally:
        await first.aclose()
        await other.aclose()


async def test_unreachable_redis_is_a_gateway_error_that_hides_the_password(
    refused_port: int,
) -> None:
    url = f"redis://:s3cret-pass@127.0.0.1:{refused_port}/0"
    limits = RateLimits(models(rpm=60), url)
    try:
        with pytest.raises(GatewayError) as caught:
            await limits.acquire("limited", 1)
    finally:
        await limits.aclose()

    message = str(caught.value)
    assert "s3cret-pass" not in message
    assert "redis://***@127.0.0.1" in message
    assert "remove gateway.redis_url" in message


async def test_unlimited_models_do_not_touch_redis(refused_port: int) -> None:
    limits = RateLimits(models(rpm=60), f"redis://127.0.0.1:{refused_port}/0")
    try:
        assert await limits.acquire("free", 10) == 0.0
    finally:
        await limits.aclose()


def test_estimate_is_prompt_characters_over_four_plus_max_tokens() -> None:
    text = "x" * 400

    assert estimate_tokens(ChatRequest(messages=[Message(role="user", content=text)])) == 100 + 256
    assert (
        estimate_tokens(ChatRequest(messages=[Message(role="user", content=text)], max_tokens=1000))
        == 1100
    )


def test_estimate_counts_content_parts_tool_calls_and_tool_definitions() -> None:
    plain = ChatRequest(messages=[Message(role="user", content="book a table for two")])
    richer = ChatRequest(
        messages=[
            Message(role="user", content=[{"type": "text", "text": "book a table for two"}]),
            Message(
                role="assistant",
                tool_calls=[ChatToolCall(id="c1", name="book", arguments='{"people": 2}' * 10)],
            ),
        ],
        tools=[{"type": "function", "function": {"name": "book", "description": "x" * 400}}],
    )

    assert estimate_tokens(richer) > estimate_tokens(plain) + 100


async def test_calls_waiting_for_a_limit_go_in_the_order_they_came() -> None:
    # rpm=600: ten at once, then one every 0.1 s. The twenty after them must not overtake
    # each other: a call that lost the race again and again would time out behind later ones.
    limits = RateLimits(models(rpm=600), max_wait_s=10)
    went: list[int] = []

    async def call(number: int) -> None:
        await limits.acquire("limited", 1)
        went.append(number)

    await asyncio.gather(*(call(number) for number in range(30)))

    assert went == list(range(30))
