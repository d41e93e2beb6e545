"""The OpenAI-compatible proxy: the real ``openai`` SDK -> the proxy -> a FakeOpenAI upstream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from seatrial.gateway import (
    FaultSpec,
    Gateway,
    GatewayConfig,
    GatewayServer,
    ModelConfig,
    Price,
    cost_usd,
)
from seatrial.gateway._types import Usage
from seatrial.testing import FakeOpenAI, FakeReply, FakeToolCall, Hang
from seatrial.trace import Span, TraceRecorder
from seatrial.trace import attrs as A

KEY_ENV = "SEATRIAL_TEST_PROXY_KEY"
SECRET = "sk-test-proxy-0123456789abcdef"
PRICE = Price(input_per_mtok=2.5, output_per_mtok=10.0)


def model(name: str, upstream: FakeOpenAI, **fields: Any) -> ModelConfig:
    return ModelConfig(
        name=name,
        model=fields.pop("model", f"{name}-2024-08-06"),
        base_url=upstream.base_url,
        api_key_env=KEY_ENV,
        price=fields.pop("price", PRICE),
        **fields,
    )


@asynccontextmanager
async def proxied(config: GatewayConfig, **options: Any) -> AsyncIterator[GatewayServer]:
    gateway = Gateway(config, **options)
    try:
        async with GatewayServer(gateway) as server:
            yield server
    finally:
        await gateway.aclose()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


@pytest.fixture
async def client_for() -> AsyncIterator[Callable[[str], openai.AsyncOpenAI]]:
    clients: list[openai.AsyncOpenAI] = []

    def make(base_url: str) -> openai.AsyncOpenAI:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="agent-key-unused", max_retries=2)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


def attempt_recorder() -> tuple[TraceRecorder, Span]:
    """A recorder with an open ``invoke_agent`` root, as the runner makes for an attempt."""
    recorder = TraceRecorder()
    root = recorder.start_span("invoke_agent test", {A.OPERATION: A.OP_INVOKE_AGENT})
    return recorder, root


def chat_spans(recorder: TraceRecorder) -> list[Span]:
    return [s for s in recorder.spans if s.operation == A.OP_CHAT]


async def test_chat_through_the_proxy_lands_as_a_priced_span_in_the_attempts_trace(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    reply = FakeReply("Paris.", input_tokens=1200, output_tokens=30)
    async with FakeOpenAI(reply) as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with proxied(config) as server:
            recorder, root = attempt_recorder()
            with server.attempt(recorder, "run-1", "capital", 1) as base_url:
                client = client_for(base_url)
                answer = await client.chat.completions.create(
                    model="main", messages=[{"role": "user", "content": "Capital of France?"}]
                )
    assert answer.choices[0].message.content == "Paris."
    assert answer.usage is not None and answer.usage.prompt_tokens == 1200
    [span] = chat_spans(recorder)
    expected = cost_usd(Usage(input_tokens=1200, output_tokens=30), PRICE)
    assert span.name == "chat main"
    assert span.parent_span_id == root.span_id
    assert span.attributes[A.REQUEST_MODEL] == "main"
    assert span.attributes[A.RESPONSE_MODEL] == "main-2024-08-06"
    assert span.attributes[A.INPUT_TOKENS] == 1200
    assert span.attributes[A.OUTPUT_TOKENS] == 30
    assert span.attributes[A.COST_USD] == pytest.approx(expected)
    assert span.attributes["seatrial.gateway.route_rule"] == "explicit"
    assert span.status == "ok"
    # The upstream got the pinned model id and the configured key, not the agent's key.
    [sent] = upstream.requests
    assert sent.body["model"] == "main-2024-08-06"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"


async def test_an_agents_own_model_name_is_routed_to_the_default(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    async with FakeOpenAI("ok") as upstream:
        config = GatewayConfig(
            models={"main": model("main", upstream)}, routing={"default": "main"}
        )
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                await client_for(base_url).chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
                )
    [span] = chat_spans(recorder)
    assert span.attributes["seatrial.gateway.route_rule"] == "default"
    assert upstream.requests[0].body["model"] == "main-2024-08-06"


async def test_streaming_through_the_proxy_delivers_text_usage_and_a_span(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    reply = FakeReply("one two three four", input_tokens=50, output_tokens=4)
    async with FakeOpenAI(reply) as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                stream = await client_for(base_url).chat.completions.create(
                    model="main",
                    messages=[{"role": "user", "content": "count"}],
                    stream=True,
                    stream_options={"include_usage": True},
                )
                text, usage, finish = [], None, None
                async for chunk in stream:
                    if chunk.usage is not None:
                        usage = chunk.usage
                    for choice in chunk.choices:
                        text.append(choice.delta.content or "")
                        finish = choice.finish_reason or finish
    assert "".join(text) == "one two three four"
    assert finish == "stop"
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (50, 4)
    [span] = chat_spans(recorder)
    assert span.attributes["seatrial.gateway.streamed"] is True
    assert span.attributes[A.OUTPUT_TOKENS] == 4
    assert span.attributes[A.COST_USD] == pytest.approx(
        cost_usd(Usage(input_tokens=50, output_tokens=4), PRICE)
    )


async def test_tool_calls_come_back_through_the_proxy_and_tool_results_go_up(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    call = FakeToolCall("get_weather", {"city": "Paris"}, id="call_1")
    async with FakeOpenAI([FakeReply(tool_calls=[call]), "It is sunny."]) as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with proxied(config) as server:
            client = client_for(server.base_url)
            tools = [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "parameters": {"type": "object", "properties": {"city": {}}},
                    },
                }
            ]
            messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
            first = await client.chat.completions.create(
                model="main", messages=messages, tools=tools
            )
            [asked] = first.choices[0].message.tool_calls or []
            assert asked.function.name == "get_weather"
            assert json.loads(asked.function.arguments) == {"city": "Paris"}
            assert first.choices[0].finish_reason == "tool_calls"
            messages += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": asked.id, "content": "sunny"},
            ]
            second = await client.chat.completions.create(
                model="main", messages=messages, tools=tools
            )
    assert second.choices[0].message.content == "It is sunny."
    sent = upstream.requests[1].body
    assert sent["tools"][0]["function"]["name"] == "get_weather"
    assert sent["messages"][1]["tool_calls"][0]["id"] == "call_1"
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}


async def test_embeddings_through_the_proxy(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    async with FakeOpenAI() as upstream:
        config = GatewayConfig(models={"emb": model("emb", upstream, embedding=True)})
        async with proxied(config) as server:
            answer = await client_for(server.base_url).embeddings.create(
                model="emb", input=["a cat", "a dog", "a cat"]
            )
    vectors = [item.embedding for item in answer.data]
    assert len(vectors) == 3 and vectors[0] == vectors[2] != vectors[1]


async def test_an_unknown_attempt_token_is_refused_with_404(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    async with FakeOpenAI("ok") as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with proxied(config) as server:
            client = client_for(f"{server.url}/a/not-a-token/v1")
            with pytest.raises(openai.NotFoundError, match="no running attempt"):
                await client.chat.completions.create(
                    model="main", messages=[{"role": "user", "content": "hi"}]
                )
    assert upstream.requests == []


async def test_a_spent_budget_answers_402_and_the_sdk_does_not_retry(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    reply = FakeReply("ok", input_tokens=1_000_000, output_tokens=0)
    async with FakeOpenAI(reply) as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)}, budgets={"run_usd": 1.0})
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-b", "c", 1) as base_url:
                client = client_for(base_url)
                await client.chat.completions.create(
                    model="main", messages=[{"role": "user", "content": "spend"}]
                )
                with pytest.raises(openai.APIStatusError) as raised:
                    await client.chat.completions.create(
                        model="main", messages=[{"role": "user", "content": "more"}]
                    )
    assert raised.value.status_code == 402
    assert "budget" in str(raised.value).lower()
    assert len(upstream.requests) == 1  # refused before the upstream, and not retried
    spans = chat_spans(recorder)
    assert spans[-1].status == "error"
    assert spans[-1].attributes[A.ERROR_TYPE] == "BudgetExceeded"


async def test_a_primary_that_misses_its_deadline_falls_back_through_the_proxy(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    # A whole answer is bounded by `timeout_s` (its first byte is the answer itself).
    async with FakeOpenAI(Hang(5)) as slow, FakeOpenAI("from backup") as backup:
        config = GatewayConfig(
            models={
                "primary": model(
                    "primary", slow, fallbacks=["backup"], timeout_s=0.2, max_retries=0
                ),
                "backup": model("backup", backup),
            }
        )
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                answer = await client_for(base_url).chat.completions.create(
                    model="primary", messages=[{"role": "user", "content": "hi"}]
                )
    assert answer.choices[0].message.content == "from backup"
    [span] = chat_spans(recorder)
    assert span.attributes["seatrial.gateway.fallback_used"] is True
    tries = json.loads(span.attributes["seatrial.gateway.attempts"])
    assert [(t["model"], t["outcome"]) for t in tries] == [
        ("primary", "timeout"),
        ("backup", "ok"),
    ]


async def test_the_api_key_never_reaches_a_span_or_an_error(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    failing = FakeReply(status=401)
    async with FakeOpenAI(failing) as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                with pytest.raises(openai.APIStatusError) as raised:
                    await client_for(base_url).chat.completions.create(
                        model="main", messages=[{"role": "user", "content": "hi"}]
                    )
                async with httpx.AsyncClient() as http:
                    raw = await http.post(
                        f"{base_url}/chat/completions",
                        json={"model": "main", "messages": [{"role": "user", "content": "x"}]},
                    )
    assert SECRET not in str(raised.value)
    assert SECRET not in raw.text
    assert SECRET not in json.dumps([s.model_dump(mode="json") for s in recorder.spans])


@pytest.mark.parametrize(
    ("kind", "status"),
    [("timeout", 504), ("http_429", 429), ("http_500", 502)],
)
async def test_failing_faults_reach_the_agent_as_http_errors_and_are_marked(
    client_for: Callable[[str], openai.AsyncOpenAI], kind: str, status: int
) -> None:
    async with FakeOpenAI("never seen") as upstream:
        fault = FaultSpec(kind=kind, latency_ms=10)  # type: ignore[arg-type]
        config = GatewayConfig(
            models={"main": model("main", upstream, max_retries=0)}, faults=[fault]
        )
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                with pytest.raises(openai.APIStatusError) as raised:
                    await client_for(base_url).chat.completions.create(
                        model="main", messages=[{"role": "user", "content": "hi"}]
                    )
    assert raised.value.status_code == status
    assert upstream.requests == []
    [span] = chat_spans(recorder)
    assert span.status == "error"
    assert span.attributes["seatrial.gateway.fault"] == kind


async def test_answer_faults_rewrite_the_answer_and_are_marked(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    call = FakeToolCall("search", {"q": "x"})
    async with FakeOpenAI(FakeReply(tool_calls=[call])) as upstream:
        config = GatewayConfig(
            models={"main": model("main", upstream)},
            faults=[
                FaultSpec(kind="empty", call=1),
                FaultSpec(kind="malformed_tool_call", call=2),
                FaultSpec(kind="latency", call=3, latency_ms=20),
            ],
        )
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                client = client_for(base_url)
                answers = [
                    await client.chat.completions.create(
                        model="main", messages=[{"role": "user", "content": "search x"}]
                    )
                    for _ in range(3)
                ]
    empty, malformed, slow = (a.choices[0].message for a in answers)
    assert not empty.content and not empty.tool_calls
    with pytest.raises(ValueError):
        json.loads((malformed.tool_calls or [])[0].function.arguments)
    assert json.loads((slow.tool_calls or [])[0].function.arguments) == {"q": "x"}
    marks = [s.attributes.get("seatrial.gateway.fault") for s in chat_spans(recorder)]
    assert marks == ["empty", "malformed_tool_call", "latency"]


async def test_a_judge_call_is_cached_but_repeats_of_a_case_never_share_an_answer(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    async with FakeOpenAI("verdict: pass") as upstream:
        config = GatewayConfig(
            models={"main": model("main", upstream)}, cache={"agent": True, "judge": True}
        )
        async with proxied(config) as server:
            question = [{"role": "user", "content": "Is this answer right?"}]
            judge = client_for(server.base_url).with_options(
                default_headers={"x-seatrial-purpose": "judge"}
            )
            for _ in range(2):
                await judge.chat.completions.create(model="main", messages=question)
            assert len(upstream.requests) == 1  # the second judge call was a cache hit
            recorders = []
            for attempt in (1, 2):
                recorder, _ = attempt_recorder()
                recorders.append(recorder)
                with server.attempt(recorder, "run-1", "case-a", attempt) as base_url:
                    await client_for(base_url).chat.completions.create(
                        model="main", messages=question
                    )
    assert len(upstream.requests) == 3  # each repeat asked the model itself
    assert [chat_spans(r)[0].attributes["seatrial.gateway.cached"] for r in recorders] == [
        False,
        False,
    ]


async def test_the_models_endpoint_lists_the_configured_names() -> None:
    async with FakeOpenAI("ok") as upstream:
        config = GatewayConfig(models={"main": model("main", upstream)})
        async with proxied(config) as server:
            async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x") as client:
                names = [m.id async for m in client.models.list()]
    assert names == ["main"]


async def test_calls_past_a_models_rpm_wait_their_turn_instead_of_failing(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    # rpm 60: one call may go at once, then one a second.
    async with FakeOpenAI("ok") as upstream:
        config = GatewayConfig(models={"main": model("main", upstream, rpm=60)})
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                client = client_for(base_url)
                for _ in range(2):
                    await client.chat.completions.create(
                        model="main", messages=[{"role": "user", "content": "hi"}]
                    )
    waits = [s.attributes.get("seatrial.gateway.limit_wait_ms", 0) for s in chat_spans(recorder)]
    assert len(upstream.requests) == 2
    assert waits[0] == 0
    assert waits[1] > 0  # it waited its turn instead of failing
    assert all(s.status == "ok" for s in chat_spans(recorder))


async def test_tpm_makes_a_call_wait_for_tokens_to_come_back(
    client_for: Callable[[str], openai.AsyncOpenAI],
) -> None:
    # tpm 60,000 holds a minute of tokens and refills 1,000 a second; each call is estimated
    # at its max_tokens (30,500) plus its prompt, so the second finds ~1,000 tokens missing.
    async with FakeOpenAI("ok") as upstream:
        config = GatewayConfig(models={"main": model("main", upstream, tpm=60_000)})
        async with proxied(config) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-1", "c", 1) as base_url:
                client = client_for(base_url)
                for _ in range(2):
                    await client.chat.completions.create(
                        model="main",
                        max_tokens=30_500,
                        messages=[{"role": "user", "content": "hi"}],
                    )
    waits = [s.attributes.get("seatrial.gateway.limit_wait_ms", 0) for s in chat_spans(recorder)]
    assert waits[0] == 0
    assert waits[1] > 0  # it waited for tokens to come back instead of being refused
    assert len(upstream.requests) == 2


async def test_a_recorded_attempt_replays_through_the_proxy_with_identical_spans(
    client_for: Callable[[str], openai.AsyncOpenAI], tmp_path: Path
) -> None:
    script = [FakeReply("first answer", input_tokens=10, output_tokens=2), "second answer"]
    questions = ["hello", "and then?"]
    async with FakeOpenAI(script) as upstream:
        config = GatewayConfig(
            models={"main": model("main", upstream)}, cassette={"mode": "record"}
        )
        async with proxied(config, project_dir=tmp_path) as server:
            recorded, _ = attempt_recorder()
            with server.attempt(recorded, "run-a", "case-1", 1) as base_url:
                client = client_for(base_url)
                first = [
                    await client.chat.completions.create(
                        model="main", messages=[{"role": "user", "content": q}]
                    )
                    for q in questions
                ]
    replay = config.model_copy(
        update={"cassette": config.cassette.model_copy(update={"mode": "replay"})}
    )
    # The upstream is gone: every answer must come from the cassette of run-a.
    async with proxied(replay, project_dir=tmp_path, replay_run_id="run-a") as server:
        replayed, _ = attempt_recorder()
        with server.attempt(replayed, "run-b", "case-1", 1) as base_url:
            client = client_for(base_url)
            again = [
                await client.chat.completions.create(
                    model="main", messages=[{"role": "user", "content": q}]
                )
                for q in questions
            ]
    assert [a.choices[0].message.content for a in again] == [
        a.choices[0].message.content for a in first
    ]

    def view(span: Span) -> dict[str, Any]:
        attributes = {k: v for k, v in span.attributes.items() if k != "seatrial.gateway.cassette"}
        return {"name": span.name, "status": span.status, "attributes": attributes}

    assert [view(s) for s in chat_spans(replayed)] == [view(s) for s in chat_spans(recorded)]
    assert {s.attributes["seatrial.gateway.cassette"] for s in chat_spans(replayed)} == {"replay"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_when_an_attempt_ends_its_call_in_flight_ends_and_is_recorded_as_cut_off(
    tmp_path: Path, stream: bool
) -> None:
    # An agent past its deadline leaves its call in the proxy; the runner ends it.
    async with FakeOpenAI(FakeReply("too late", delay_s=30)) as upstream:
        config = GatewayConfig(
            models={"main": model("main", upstream)}, cassette={"mode": "record"}
        )
        async with proxied(config, project_dir=tmp_path) as server:
            recorder, _ = attempt_recorder()
            with server.attempt(recorder, "run-a", "c", 1) as base_url:
                body = {"model": "main", "messages": [{"role": "user", "content": "hi"}]}
                async with httpx.AsyncClient() as client:
                    sent = asyncio.ensure_future(
                        client.post(f"{base_url}/chat/completions", json={**body, "stream": stream})
                    )
                    while not upstream.requests:  # the call waits on the model
                        await asyncio.sleep(0.01)
                    await server.end_calls(recorder)
                    answered = await sent
    assert answered.status_code == 504
    assert answered.json()["error"]["type"] == "attempt_ended"
    [span] = chat_spans(recorder)
    assert span.status == "error" and span.end_time_unix_nano  # closed before the trace is read
    cassette = (tmp_path / ".seatrial" / "cassettes" / "run-a.jsonl").read_text(encoding="utf-8")
    [line] = [json.loads(t) for t in cassette.splitlines()]
    assert line["response"] is None and line["cut_off_after_s"] >= 0
