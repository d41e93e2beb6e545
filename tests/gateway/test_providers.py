"""Providers: the real openai / anthropic / litellm SDKs against fake servers on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import openai
import pytest

from seatrial.errors import GatewayError, ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers import Provider, ProviderPool, new_provider
from seatrial.gateway._types import ChatChunk, ChatRequest, ChatToolCall, EmbeddingRequest, Message
from seatrial.testing import (
    FakeAnthropic,
    FakeOpenAI,
    FakeReply,
    FakeToolCall,
    HttpReply,
    fake_embedding,
)
from tests.gateway.conftest import model_for

ROOT = Path(__file__).resolve().parents[2]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
TOOL_HISTORY = [
    Message(role="system", content="Be brief."),
    Message(role="user", content="Weather in Paris and Rome?"),
    Message(
        role="assistant",
        tool_calls=[
            ChatToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}'),
            ChatToolCall(id="c2", name="get_weather", arguments='{"city": "Rome"}'),
        ],
    ),
    Message(role="tool", tool_call_id="c1", content="sunny"),
    Message(role="tool", tool_call_id="c2", content="rain"),
]


def ask(text: str = "What is the capital of France?", **fields: Any) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], **fields)


@asynccontextmanager
async def opened(model: ModelConfig) -> AsyncIterator[Provider]:
    """A provider of its own for ``model``, closed after (its SDK client belongs to the test)."""
    provider = new_provider(model)
    try:
        yield provider
    finally:
        await provider.aclose()


async def chat(model: ModelConfig, request: ChatRequest, first_byte: float = 5, total: float = 10):
    async with opened(model) as provider:
        return await provider.chat(request, model, first_byte_timeout_s=first_byte, timeout_s=total)


async def stream(
    model: ModelConfig, request: ChatRequest, first_byte: float = 5, total: float = 10
) -> list[ChatChunk]:
    async with opened(model) as provider:
        return [
            chunk
            async for chunk in provider.stream(
                request, model, first_byte_timeout_s=first_byte, timeout_s=total
            )
        ]


def joined_tool_calls(chunks: list[ChatChunk]) -> dict[int, dict[str, str]]:
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        if chunk.tool_call_index is None:
            continue
        call = calls.setdefault(chunk.tool_call_index, {"id": "", "name": "", "arguments": ""})
        call["id"] += chunk.tool_call_id or ""
        call["name"] += chunk.tool_name or ""
        call["arguments"] += chunk.arguments or ""
    return calls


# --- OpenAI-compatible -------------------------------------------------------------------


async def test_openai_chat_returns_the_answer_usage_and_the_model_that_answered(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply(
        "Paris.", input_tokens=120, output_tokens=2, cached_input_tokens=100, model="gpt-x-0806"
    )
    response = await chat(openai_model, ask(temperature=0.2, max_tokens=50, seed=7))

    assert response.message.content == "Paris."
    assert response.message.role == "assistant"
    assert response.usage.input_tokens == 120
    assert response.usage.output_tokens == 2
    assert response.usage.cached_input_tokens == 100
    assert (response.model, response.provider) == ("main", "openai")
    assert response.provider_model == "gpt-x-0806"
    assert response.finish_reason == "stop"
    assert response.cost_usd == 0 and response.latency_ms > 0
    [sent] = fake_openai.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "fake-model-2024-01-01"
    assert sent.body["messages"] == [{"role": "user", "content": "What is the capital of France?"}]
    assert (sent.body["temperature"], sent.body["max_tokens"], sent.body["seed"]) == (0.2, 50, 7)


async def test_openai_tool_calls_go_out_and_come_back(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    call = FakeToolCall("get_weather", {"city": "Oslo"}, id="call_9")
    fake_openai.script = FakeReply(tool_calls=[call])
    request = ChatRequest(messages=TOOL_HISTORY, tools=[WEATHER_TOOL], tool_choice="auto")

    response = await chat(openai_model, request)

    assert response.tool_calls == [
        ChatToolCall(id="call_9", name="get_weather", arguments='{"city": "Oslo"}')
    ]
    assert response.message.content is None and response.finish_reason == "tool_calls"
    sent = fake_openai.requests[0].body
    assert sent["tools"] == [WEATHER_TOOL] and sent["tool_choice"] == "auto"
    assert sent["messages"][2]["tool_calls"][1] == {
        "id": "c2",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
    }
    assert sent["messages"][4] == {"role": "tool", "content": "rain", "tool_call_id": "c2"}


async def test_openai_stream_yields_the_text_then_finish_and_usage_last(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply("one two three", input_tokens=9, output_tokens=3)

    chunks = await stream(openai_model, ask(stream=True))

    assert "".join(c.content or "" for c in chunks) == "one two three"
    assert len([c for c in chunks if c.content]) == 3
    last = chunks[-1]
    assert last.finish_reason == "stop"
    assert last.usage is not None and (last.usage.input_tokens, last.usage.output_tokens) == (9, 3)
    assert all(c.finish_reason is None and c.usage is None for c in chunks[:-1])
    assert fake_openai.requests[0].body["stream_options"] == {"include_usage": True}


async def test_openai_stream_carries_tool_calls_in_fragments_that_join(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply(
        tool_calls=[FakeToolCall("a", {"x": 1}), FakeToolCall("b", {"y": [1, 2]})]
    )

    chunks = await stream(openai_model, ask(tools=[WEATHER_TOOL]))

    calls = joined_tool_calls(chunks)
    assert [calls[i]["name"] for i in (0, 1)] == ["a", "b"]
    assert [json.loads(calls[i]["arguments"]) for i in (0, 1)] == [{"x": 1}, {"y": [1, 2]}]
    assert all(calls[i]["id"] for i in (0, 1))
    assert chunks[-1].finish_reason == "tool_calls"


async def test_openai_embeddings_are_one_deterministic_vector_per_text(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    model = openai_model.model_copy(update={"embedding": True})
    request = EmbeddingRequest(input=["cat", "dog", "cat"])

    async with opened(model) as provider:
        response = await provider.embed(request, model, timeout_s=5)

    assert response.vectors == [fake_embedding("cat"), fake_embedding("dog"), fake_embedding("cat")]
    assert response.model == "main" and response.usage.input_tokens == 3
    assert fake_openai.requests[0].path == "/v1/embeddings"


@pytest.mark.parametrize(
    ("reply", "kind", "status", "retryable"),
    [
        (FakeReply(status=429), "rate_limited", 429, True),
        (FakeReply(status=500), "server_error", 500, True),
        (FakeReply(status=503), "server_error", 503, True),
        (FakeReply(status=400), "bad_request", 400, False),
        (FakeReply(status=404), "bad_request", 404, False),
        (FakeReply(malformed=True), "malformed", None, False),
        (
            HttpReply(200, '{"id": "x", "object": "chat.completion"}', "application/json"),
            "malformed",
            None,
            False,
        ),
    ],
)
async def test_openai_failures_become_provider_errors_of_one_kind(
    fake_openai: FakeOpenAI,
    openai_model: ModelConfig,
    reply: Any,
    kind: str,
    status: int | None,
    retryable: bool,
) -> None:
    fake_openai.script = reply
    with pytest.raises(ProviderError) as caught:
        await chat(openai_model, ask())
    error = caught.value
    assert (error.kind, error.status, error.retryable) == (kind, status, retryable)
    assert "'main'" in str(error)
    assert len(fake_openai.requests) == 1  # the SDK does not retry: the gateway does


async def test_a_malformed_stream_event_is_a_malformed_error(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply("hello there", malformed=True)
    with pytest.raises(ProviderError) as caught:
        await stream(openai_model, ask())
    assert caught.value.kind == "malformed"


async def test_a_server_that_is_not_there_is_a_retryable_connection_error(
    refused_url: str,
) -> None:
    model = ModelConfig(name="gone", model="m", base_url=refused_url)
    with pytest.raises(ProviderError) as caught:
        await chat(model, ask())
    assert (caught.value.kind, caught.value.retryable) == ("connection", True)
    assert refused_url in str(caught.value)
    with pytest.raises(ProviderError) as caught:
        async with opened(model) as provider:
            await provider.embed(EmbeddingRequest(input=["x"]), model, timeout_s=5)
    assert caught.value.kind == "connection"


async def test_no_first_byte_in_time_is_a_retryable_timeout(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply("late", delay_s=30)
    with pytest.raises(ProviderError) as caught:
        await chat(openai_model, ask(), first_byte=0.2, total=30)
    assert (caught.value.kind, caught.value.retryable) == ("timeout", True)
    assert "no first byte within 0.2 s" in str(caught.value)


async def test_a_stream_with_no_first_chunk_in_time_times_out(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply("late", delay_s=30)
    with pytest.raises(ProviderError) as caught:
        await stream(openai_model, ask(), first_byte=0.2, total=30)
    assert "no first byte within 0.2 s" in str(caught.value)


async def test_a_stream_that_starts_but_runs_past_the_total_times_out(
    fake_openai: FakeOpenAI, openai_model: ModelConfig
) -> None:
    fake_openai.script = FakeReply("a b c d e f g h", chunk_delay_s=0.5)
    received: list[ChatChunk] = []
    with pytest.raises(ProviderError) as caught:
        async with opened(openai_model) as provider:
            async for chunk in provider.stream(
                ask(), openai_model, first_byte_timeout_s=5, timeout_s=0.8
            ):
                received.append(chunk)
    assert caught.value.kind == "timeout"
    assert "did not finish within 0.8 s" in str(caught.value)
    assert 0 < len(received) < 8  # it had started streaming


# --- keys --------------------------------------------------------------------------------


async def test_the_key_comes_from_the_named_environment_variable(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEATRIAL_TEST_KEY", "sk-from-env-123")
    model = model_for(fake_openai, api_key_env="SEATRIAL_TEST_KEY")
    await chat(model, ask())
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-from-env-123"


async def test_a_local_server_never_receives_the_users_openai_key(
    fake_openai: FakeOpenAI, openai_model: ModelConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    await chat(openai_model, ask())
    assert "sk-real-openai-key" not in fake_openai.requests[0].headers["authorization"]


def test_an_unset_key_variable_is_named_and_not_retried(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEATRIAL_MISSING_KEY", raising=False)
    with pytest.raises(ProviderError) as caught:
        new_provider(model_for(fake_openai, api_key_env="SEATRIAL_MISSING_KEY"))
    assert "SEATRIAL_MISSING_KEY" in str(caught.value)
    assert (caught.value.kind, caught.value.retryable) == ("bad_request", False)


@pytest.mark.parametrize("server_kind", [FakeOpenAI, FakeAnthropic])
async def test_a_key_the_server_echoes_back_never_reaches_the_error_or_its_traceback(
    server_kind: type[FakeOpenAI] | type[FakeAnthropic], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-secret-do-not-leak-0123456789"
    monkeypatch.setenv("SEATRIAL_TEST_KEY", secret)

    def reject(request: dict[str, Any]) -> HttpReply:
        return HttpReply(
            401, json.dumps({"error": {"message": f"bad key {secret}"}}), "application/json"
        )

    with server_kind(reject) as server:
        model = model_for(server, api_key_env="SEATRIAL_TEST_KEY")
        with pytest.raises(ProviderError) as caught:
            await chat(model, ask())
        assert server.requests[0].headers.get("authorization", "").endswith(secret) or (
            server.requests[0].headers.get("x-api-key") == secret
        )
    printed = "".join(traceback.format_exception(caught.value))
    assert caught.value.kind == "bad_request"
    assert secret not in str(caught.value) and secret not in printed
    assert "***" in str(caught.value)


# --- Anthropic ---------------------------------------------------------------------------


async def test_anthropic_round_trip_maps_system_tools_and_tool_results_both_ways(
    fake_anthropic: FakeAnthropic, anthropic_model: ModelConfig
) -> None:
    call = FakeToolCall("get_weather", {"city": "Oslo"}, id="toolu_1")
    fake_anthropic.script = FakeReply(
        "Checking.", tool_calls=[call], input_tokens=300, cached_input_tokens=200, output_tokens=7
    )
    request = ChatRequest(
        messages=TOOL_HISTORY, tools=[WEATHER_TOOL], tool_choice="required", max_tokens=100
    )

    response = await chat(anthropic_model, request)

    sent = fake_anthropic.requests[0]
    assert sent.path == "/v1/messages"
    body = sent.body
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 100 and body["model"] == "claude-fake-20250101"
    assert body["tools"] == [
        {
            "name": "get_weather",
            "input_schema": WEATHER_TOOL["function"]["parameters"],  # type: ignore[index]
            "description": "Weather for a city",
        }
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    assert body["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "c1",
            "content": [{"type": "text", "text": "sunny"}],
        },
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "content": [{"type": "text", "text": "rain"}],
        },
    ]
    assert response.message.content == "Checking."
    assert response.tool_calls == [
        ChatToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Oslo"}')
    ]
    assert response.finish_reason == "tool_calls"
    assert (response.provider, response.provider_model) == ("anthropic", "claude-fake-20250101")
    usage = response.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (300, 200, 7)


async def test_anthropic_stream_yields_text_tool_calls_and_usage_last(
    fake_anthropic: FakeAnthropic, anthropic_model: ModelConfig
) -> None:
    fake_anthropic.script = FakeReply(
        "Let me look.",
        tool_calls=[FakeToolCall("get_weather", {"city": "Oslo"}, id="toolu_7")],
        input_tokens=50,
        cached_input_tokens=20,
        output_tokens=12,
    )

    chunks = await stream(anthropic_model, ask(tools=[WEATHER_TOOL]))

    assert "".join(c.content or "" for c in chunks) == "Let me look."
    calls = joined_tool_calls(chunks)
    assert calls == {0: {"id": "toolu_7", "name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    last = chunks[-1]
    assert last.finish_reason == "tool_calls"
    assert last.usage is not None
    assert (last.usage.input_tokens, last.usage.cached_input_tokens) == (50, 20)
    assert last.usage.output_tokens == 12


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [(429, "rate_limited", True), (529, "server_error", True), (400, "bad_request", False)],
)
async def test_anthropic_failures_become_provider_errors_of_one_kind(
    fake_anthropic: FakeAnthropic,
    anthropic_model: ModelConfig,
    status: int,
    kind: str,
    retryable: bool,
) -> None:
    fake_anthropic.script = FakeReply(status=status)
    with pytest.raises(ProviderError) as caught:
        await chat(anthropic_model, ask())
    assert (caught.value.kind, caught.value.status, caught.value.retryable) == (
        kind,
        status,
        retryable,
    )


async def test_anthropic_no_first_byte_in_time_is_a_timeout(
    fake_anthropic: FakeAnthropic, anthropic_model: ModelConfig
) -> None:
    fake_anthropic.script = FakeReply("late", delay_s=30)
    with pytest.raises(ProviderError) as caught:
        await chat(anthropic_model, ask(), first_byte=0.2, total=30)
    assert caught.value.kind == "timeout"


async def test_anthropic_cannot_embed_and_says_what_to_configure(
    anthropic_model: ModelConfig,
) -> None:
    with pytest.raises(ProviderError) as caught:
        async with opened(anthropic_model) as provider:
            await provider.embed(EmbeddingRequest(input=["x"]), anthropic_model, timeout_s=5)
    assert caught.value.kind == "bad_request" and "embedding: true" in str(caught.value)


# --- the pool, litellm -------------------------------------------------------------------


async def test_models_of_one_endpoint_share_a_provider_and_others_do_not(
    fake_openai: FakeOpenAI, fake_anthropic: FakeAnthropic
) -> None:
    a = model_for(fake_openai, name="a")
    b = model_for(fake_openai, name="b", model="other-model")
    c = model_for(fake_anthropic, name="c")
    pool, other = ProviderPool(), ProviderPool()
    try:
        assert pool.provider_for(a) is pool.provider_for(b)
        assert pool.provider_for(a) is not pool.provider_for(c)
        assert (pool.provider_for(a).name, pool.provider_for(c).name) == ("openai", "anthropic")
        assert other.provider_for(a) is not pool.provider_for(a)  # two gateways share nothing
    finally:
        await pool.aclose()
        await other.aclose()


def test_litellm_missing_names_the_install_command(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # makes `import litellm` fail
    model = model_for(fake_openai, provider="litellm", model="openai/fake")
    with pytest.raises(GatewayError, match=r'pip install "seatrial\[litellm\]"'):
        new_provider(model)


def test_the_litellm_requirements_pin_one_version_with_hashes() -> None:
    lines = (ROOT / "requirements" / "litellm.txt").read_text().splitlines()
    pins = [line for line in lines if line.startswith("litellm==")]
    assert pins and pins[0].split()[0].rstrip("\\") == "litellm==1.110.2"
    assert any("--hash=sha256:" in line for line in lines)


async def test_litellm_calls_an_openai_compatible_server(
    fake_openai: FakeOpenAI,
) -> None:
    if importlib.util.find_spec("litellm") is None:  # imported by the provider, not here
        pytest.skip('litellm is not installed: pip install "seatrial[litellm]"')
    fake_openai.script = [
        FakeReply("from litellm", input_tokens=4, output_tokens=2),
        FakeReply("streamed answer", input_tokens=4, output_tokens=2),
        FakeReply(status=429),
    ]
    model = model_for(fake_openai, provider="litellm", model="openai/fake-model")

    response = await chat(model, ask())
    chunks = await stream(model, ask())
    with pytest.raises(ProviderError) as caught:
        await chat(model, ask())

    assert response.message.content == "from litellm" and response.provider == "litellm"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (4, 2)
    assert "".join(c.content or "" for c in chunks) == "streamed answer"
    assert chunks[-1].finish_reason == "stop"
    assert (caught.value.kind, caught.value.retryable) == ("rate_limited", True)
    assert fake_openai.requests[0].body["model"] == "fake-model"


# --- the fake servers themselves ---------------------------------------------------------


def test_a_fake_server_serves_sync_clients_and_says_when_its_script_runs_out() -> None:
    with FakeOpenAI(["first"]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        with client:
            answer = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
            with pytest.raises(openai.InternalServerError, match="no reply scripted for request 2"):
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "again"}]
                )
    assert answer.choices[0].message.content == "first"
    assert [r.body["messages"][0]["content"] for r in server.requests] == ["hi", "again"]


def test_a_fake_server_without_a_script_echoes_the_last_user_message() -> None:
    with FakeAnthropic() as server:
        import anthropic

        with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0) as client:
            message = client.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "ping"}]
            )
    assert message.content[0].text == "echo: ping"  # type: ignore[union-attr]
