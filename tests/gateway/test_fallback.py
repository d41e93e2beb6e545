"""Fallback: fast-fail primary, retries with backoff, moving down the chain, naming every try."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from seatrial.errors import (
    BudgetExceeded,
    FallbackExhausted,
    GatewayError,
    ProviderError,
    RateLimitTimeout,
)
from seatrial.gateway._config import GatewayConfig, ModelConfig
from seatrial.gateway._fallback import fallback_chain, with_fallback

PRIMARY = ModelConfig(name="primary", model="gpt-4o", first_byte_timeout_s=3, timeout_s=20)
BACKUP = ModelConfig(name="backup", model="claude", provider="anthropic", timeout_s=45)
LAST = ModelConfig(name="last", model="llama3", max_retries=0)


def rate_limited() -> ProviderError:
    return ProviderError("HTTP 429 Too Many Requests", "rate_limited", 429, retryable=True)


def server_error() -> ProviderError:
    return ProviderError("HTTP 500 from upstream", "server_error", 500, retryable=True)


def bad_request() -> ProviderError:
    return ProviderError("HTTP 400: unknown parameter", "bad_request", 400)


@dataclass
class Script:
    """A stand-in for one provider call per try: raises or answers as scripted per model."""

    outcomes: dict[str, list[BaseException | str]]
    calls: list[tuple[str, float, float]] = field(default_factory=list)

    async def __call__(self, model: ModelConfig, first_byte_s: float, timeout_s: float) -> str:
        self.calls.append((model.name, first_byte_s, timeout_s))
        outcome = self.outcomes[model.name].pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


async def test_a_healthy_primary_answers_with_one_ok_try() -> None:
    script = Script({"primary": ["hello"]})

    answer, model, attempts = await with_fallback([PRIMARY, BACKUP], script, backoff_s=0)

    assert (answer, model.name) == ("hello", "primary")
    assert [(a.model, a.outcome) for a in attempts] == [("primary", "ok")]
    assert attempts[0].latency_ms >= 0


async def test_primary_fails_fast_on_first_byte_and_fallbacks_wait_their_full_timeout() -> None:
    timeout = ProviderError("no first byte within 3 s", "timeout", retryable=True)
    script = Script({"primary": [timeout] * 3, "backup": ["from backup"]})

    answer, model, attempts = await with_fallback([PRIMARY, BACKUP], script, backoff_s=0)

    assert (answer, model.name) == ("from backup", "backup")
    assert script.calls == [
        ("primary", 3.0, 20.0),
        ("primary", 3.0, 20.0),
        ("primary", 3.0, 20.0),
        ("backup", 45.0, 45.0),
    ]
    assert [a.outcome for a in attempts] == ["timeout", "timeout", "timeout", "ok"]


async def test_retryable_errors_are_retried_max_retries_times_before_moving_on() -> None:
    primary = PRIMARY.model_copy(update={"max_retries": 1})
    script = Script({"primary": [rate_limited(), server_error()], "backup": ["ok"]})

    _, model, attempts = await with_fallback([primary, BACKUP], script, backoff_s=0.001)

    assert model.name == "backup"
    assert [(a.model, a.outcome) for a in attempts] == [
        ("primary", "rate_limited"),
        ("primary", "server_error"),
        ("backup", "ok"),
    ]
    assert attempts[0].detail == "HTTP 429 Too Many Requests"


async def test_a_retry_that_succeeds_stays_on_the_primary() -> None:
    script = Script({"primary": [server_error(), "second time lucky"]})

    answer, model, attempts = await with_fallback([PRIMARY, BACKUP], script, backoff_s=0.001)

    assert (answer, model.name) == ("second time lucky", "primary")
    assert [a.outcome for a in attempts] == ["server_error", "ok"]


async def test_a_non_retryable_error_moves_to_the_next_model_at_once() -> None:
    script = Script({"primary": [bad_request()], "backup": ["ok"]})

    _, model, attempts = await with_fallback([PRIMARY, BACKUP], script, backoff_s=0)

    assert model.name == "backup"
    assert [(a.model, a.outcome) for a in attempts] == [
        ("primary", "bad_request"),
        ("backup", "ok"),
    ]


async def test_a_rate_limit_wait_too_long_moves_to_the_next_model_without_retrying() -> None:
    wait = RateLimitTimeout("model `primary` is at its rpm limit")
    script = Script({"primary": [wait], "backup": ["ok"]})

    _, model, attempts = await with_fallback([PRIMARY, BACKUP], script, backoff_s=0)

    assert model.name == "backup"
    assert [a.outcome for a in attempts] == ["rate_limit_wait", "ok"]


async def test_a_bare_timeout_from_the_call_is_treated_as_a_retryable_timeout() -> None:
    script = Script({"last": [TimeoutError()], "backup": [TimeoutError(), "ok"]})

    _, model, attempts = await with_fallback([LAST, BACKUP], script, backoff_s=0)

    assert model.name == "backup"
    assert [(a.model, a.outcome, a.detail) for a in attempts] == [
        ("last", "timeout", "TimeoutError"),
        ("backup", "timeout", "TimeoutError"),
        ("backup", "ok", ""),
    ]


async def test_an_exhausted_chain_raises_one_error_naming_every_try() -> None:
    script = Script(
        {
            "primary": [rate_limited(), rate_limited(), rate_limited()],
            "last": [bad_request()],
        }
    )

    with pytest.raises(FallbackExhausted) as caught:
        await with_fallback([PRIMARY, LAST], script, backoff_s=0.001)

    error = caught.value
    assert [(a.model, a.outcome) for a in error.attempts] == [  # type: ignore[attr-defined]
        ("primary", "rate_limited"),
        ("primary", "rate_limited"),
        ("primary", "rate_limited"),
        ("last", "bad_request"),
    ]
    message = str(error)
    assert "after 4 tries" in message
    assert "primary: rate_limited (HTTP 429 Too Many Requests)" in message
    assert "last: bad_request (HTTP 400: unknown parameter)" in message
    assert "add fallbacks" in message


async def test_a_spent_budget_stops_the_chain_instead_of_trying_fallbacks() -> None:
    script = Script({"primary": [BudgetExceeded("run budget of $1.00 spent")], "backup": ["ok"]})

    with pytest.raises(BudgetExceeded):
        await with_fallback([PRIMARY, BACKUP], script, backoff_s=0)

    assert [name for name, _, _ in script.calls] == ["primary"]


async def test_an_api_key_in_an_error_never_reaches_the_attempts_or_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SEATRIAL_TEST_KEY", "sk-test-0123456789abcdef")
    keyed = LAST.model_copy(update={"api_key_env": "SEATRIAL_TEST_KEY"})
    leaky = ProviderError("401: bad key sk-test-0123456789abcdef", "bad_request", 401)
    script = Script({"last": [leaky]})

    with pytest.raises(FallbackExhausted) as caught:
        await with_fallback([keyed], script, backoff_s=0)

    assert "sk-test-0123456789abcdef" not in str(caught.value)
    assert caught.value.attempts[0].detail == "401: bad key ***"  # type: ignore[attr-defined]


async def test_an_empty_chain_is_an_error() -> None:
    with pytest.raises(GatewayError, match="chain is empty"):
        await with_fallback([], Script({}), backoff_s=0)


def test_chain_is_the_model_then_its_fallbacks_depth_first_without_cycles() -> None:
    config = GatewayConfig(
        models={
            "a": ModelConfig(name="a", model="m-a", fallbacks=["b", "c"]),
            "b": ModelConfig(name="b", model="m-b", fallbacks=["a", "d"]),
            "c": ModelConfig(name="c", model="m-c", fallbacks=["c"]),
            "d": ModelConfig(name="d", model="m-d"),
        }
    )

    assert [m.name for m in fallback_chain(config, "a")] == ["a", "b", "d", "c"]
    assert [m.name for m in fallback_chain(config, "c")] == ["c"]
    assert [m.name for m in fallback_chain(config, "d")] == ["d"]


def test_chain_for_an_unknown_model_is_an_error() -> None:
    config = GatewayConfig(models={"a": ModelConfig(name="a", model="m-a")})

    with pytest.raises(GatewayError, match="unknown model `z` \\(configured: a\\)"):
        fallback_chain(config, "z")
