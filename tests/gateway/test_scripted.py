"""The in-process scripted model: a gateway provider without a socket, and the one pipeline
that whole and streamed calls share (spans, ledger, fallback, cancellation) seen through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from seatrial.errors import ConfigError, FallbackExhausted
from seatrial.gateway import (
    ChatChunk,
    ChatRequest,
    EmbeddingRequest,
    Gateway,
    GatewayConfig,
    Message,
    ModelConfig,
    Price,
)
from seatrial.store import Store
from seatrial.testing import (
    FakeOpenAI,
    FakeReply,
    FakeToolCall,
    Hang,
    ScriptedModel,
    fake_embedding,
)
from seatrial.trace import Span, TraceRecorder
from seatrial.trace import attrs as A

PRICE = Price(input_per_mtok=1.0, output_per_mtok=4.0)

NAMED = ScriptedModel("named by the configuration")
"""Found through ``base_url: python:tests.gateway.test_scripted:NAMED``."""


def scripted(name: str = "m", **fields: Any) -> ModelConfig:
    return ModelConfig(name=name, provider="scripted", model=f"{name}-v1", price=PRICE, **fields)


def ask(text: str = "hi", **fields: Any) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], model="m", **fields)


@asynccontextmanager
async def gateway(
    models: list[ModelConfig], providers: dict[str, ScriptedModel], **options: Any
) -> AsyncIterator[Gateway]:
    opened = Gateway(
        GatewayConfig(models={m.name: m for m in models}), providers=providers, **options
    )
    try:
        yield opened
    finally:
        await opened.aclose()


def chat_spans(recorder: TraceRecorder) -> list[Span]:
    return [s for s in recorder.spans if s.operation == A.OP_CHAT]


def text_of(chunks: list[ChatChunk]) -> str:
    return "".join(c.content or "" for c in chunks)


async def test_a_scripted_model_answers_whole_priced_and_spanned_without_a_server() -> None:
    model = ScriptedModel(["hello there", "second answer"])
    recorder = TraceRecorder()
    async with gateway([scripted()], {"m": model}) as gw:
        with recorder.activate():
            first = await gw.chat(ask("hi"))
            second = await gw.chat(ask("again"))
    assert [first.message.content, second.message.content] == ["hello there", "second answer"]
    assert (first.model, first.provider, first.provider_model) == ("m", "scripted", "m-v1")
    assert first.usage.input_tokens == 1 and first.usage.output_tokens == 2
    assert first.cost_usd == pytest.approx((1 * 1.0 + 2 * 4.0) / 1e6)
    assert [r.messages[-1].content for r in model.requests] == ["hi", "again"]
    spans = chat_spans(recorder)
    assert [s.status for s in spans] == ["ok", "ok"]
    assert spans[0].attributes[A.RESPONSE_MODEL] == "m-v1"


async def test_a_streamed_answer_and_a_whole_one_settle_the_same_ledger_row(
    tmp_path: Path,
) -> None:
    reply = FakeReply("it ships today", tool_calls=[FakeToolCall("track", {"order": "A1"})])
    with Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
        async with gateway([scripted()], {"m": ScriptedModel(reply)}, store=store) as gw:
            whole = await gw.chat(ask(run_id="r1"))
            chunks = [c async for c in gw.stream(ask(run_id="r1", stream=True))]
        rows = store.model_calls("r1")
    assert text_of(chunks) == "it ships today"
    arguments = "".join(c.arguments or "" for c in chunks if c.tool_call_index == 0)
    assert arguments == whole.tool_calls[0].arguments == '{"order": "A1"}'
    assert chunks[-1].finish_reason == "tool_calls" and chunks[-1].usage == whole.usage
    assert len(rows) == 2
    assert rows[0].cost_usd == rows[1].cost_usd == whole.cost_usd > 0
    assert rows[0].output_tokens == rows[1].output_tokens


async def test_a_model_the_configuration_names_is_scripted_from_its_python_spec() -> None:
    NAMED.script = "named by the configuration"
    config = scripted(base_url="python:tests.gateway.test_scripted:NAMED")
    async with gateway([config], {}) as gw:
        answer = await gw.chat(ask("who answers?"))
    assert answer.message.content == "named by the configuration"
    assert NAMED.requests[-1].messages[-1].content == "who answers?"


async def test_a_scripted_model_without_a_script_fails_naming_the_two_fixes() -> None:
    async with gateway([scripted()], {}) as gw:
        with pytest.raises(ConfigError, match=r"base_url: python:module:NAME.*providers="):
            await gw.chat(ask())


async def test_a_spec_naming_something_that_is_not_a_model_is_refused() -> None:
    config = scripted(base_url="python:tests.gateway.test_scripted:PRICE")
    async with gateway([config], {}) as gw:
        with pytest.raises(ConfigError, match="is a Price, not a provider"):
            await gw.chat(ask())


def test_a_scripted_base_url_must_be_a_python_spec() -> None:
    with pytest.raises(ValidationError, match="python:module:NAME"):
        scripted(base_url="http://127.0.0.1:8000/v1")
    assert scripted(base_url="python:pkg.mod:MODEL").base_url == "python:pkg.mod:MODEL"


async def test_a_scripted_server_error_falls_back_and_every_try_is_recorded() -> None:
    models = [scripted("m", fallbacks=["b"], max_retries=1), scripted("b")]
    providers = {"m": ScriptedModel(FakeReply(status=500)), "b": ScriptedModel("backup")}
    async with gateway(models, providers) as gw:
        answer = await gw.chat(ask())
    assert answer.message.content == "backup" and answer.fallback_used
    assert [(a.model, a.outcome) for a in answer.attempts] == [
        ("m", "server_error"),
        ("m", "server_error"),
        ("b", "ok"),
    ]


async def test_a_scripted_bad_request_is_not_retried() -> None:
    model = ScriptedModel(FakeReply(status=400))
    async with gateway([scripted(max_retries=3)], {"m": model}) as gw:
        with pytest.raises(FallbackExhausted) as failed:
            await gw.chat(ask())
    assert [a.outcome for a in failed.value.attempts] == ["bad_request"]
    assert len(model.requests) == 1


async def test_a_late_first_byte_times_out_the_stream_and_the_fallback_answers() -> None:
    models = [
        scripted("m", fallbacks=["b"], first_byte_timeout_s=0.05, max_retries=0),
        scripted("b"),
    ]
    providers = {"m": ScriptedModel(FakeReply("late", delay_s=30)), "b": ScriptedModel("on time")}
    async with gateway(models, providers) as gw:
        chunks = [c async for c in gw.stream(ask(stream=True))]
    assert text_of(chunks) == "on time"


async def test_a_script_that_runs_out_says_which_request_had_no_reply() -> None:
    async with gateway([scripted(max_retries=0)], {"m": ScriptedModel(["only one"])}) as gw:
        await gw.chat(ask())
        with pytest.raises(FallbackExhausted, match="no reply scripted for request 2"):
            await gw.chat(ask())


async def test_no_script_echoes_and_embeddings_are_the_fake_vectors() -> None:
    model = ScriptedModel()
    async with gateway([scripted(embedding=True)], {"m": model}) as gw:
        answer = await gw.chat(ask("repeat me"))
        vectors = await gw.embed(EmbeddingRequest(model="m", input=["cat", "dog"]))
    assert answer.message.content == "echo: repeat me"
    assert vectors.vectors == [fake_embedding("cat"), fake_embedding("dog")]
    assert model.embedded[0].input == ["cat", "dog"]


async def test_a_cancelled_call_propagates_and_ends_its_span_as_failed() -> None:
    model = ScriptedModel(Hang())
    recorder = TraceRecorder()
    async with gateway([scripted(first_byte_timeout_s=60)], {"m": model}) as gw:
        with recorder.activate():
            call = asyncio.create_task(gw.chat(ask()))
            while not model.requests:  # the call is waiting on the model
                await asyncio.sleep(0)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
    [span] = chat_spans(recorder)
    assert span.status == "error" and span.attributes[A.ERROR_TYPE] == "CancelledError"


async def test_a_stream_the_reader_stops_early_ends_its_span_and_is_not_settled(
    tmp_path: Path,
) -> None:
    recorder = TraceRecorder()
    model = ScriptedModel("one two three four")
    with Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
        async with gateway([scripted()], {"m": model}, store=store) as gw:
            with recorder.activate():
                chunks = gw.stream(ask(run_id="r1", stream=True))
                first = await anext(chunks)
                await chunks.aclose()  # type: ignore[attr-defined]
        rows = store.model_calls("r1")
    assert first.content == "one "
    [span] = chat_spans(recorder)
    assert span.status == "error" and span.attributes[A.ERROR_TYPE] == "GeneratorExit"
    assert rows == []  # an answer never delivered is not charged


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_script_answers_the_same_in_process_as_from_the_fake_openai_server(
    streamed: bool,
) -> None:
    reply = FakeReply("two words", tool_calls=[FakeToolCall("track", {"order": "A1"}, id="c1")])
    request = ask("where is my order", stream=streamed)
    async with FakeOpenAI(reply) as server:
        over_http = scripted().model_copy(
            update={"provider": "openai", "base_url": server.base_url}
        )
        async with gateway([over_http], {}) as gw:
            served = await answer_of(gw, request, streamed)
    async with gateway([scripted()], {"m": ScriptedModel(reply)}) as gw:
        played = await answer_of(gw, request, streamed)
    assert played == served


async def answer_of(gw: Gateway, request: ChatRequest, streamed: bool) -> dict[str, Any]:
    """What a caller sees of an answer, whichever way it came."""
    if not streamed:
        whole = await gw.chat(request)
        calls = [(c.id, c.name, c.arguments) for c in whole.tool_calls]
        return {
            "text": whole.message.content,
            "calls": calls,
            "usage": whole.usage,
            "finish": whole.finish_reason,
            "cost": whole.cost_usd,
        }
    chunks = [c async for c in gw.stream(request)]
    calls = [(c.tool_call_id, c.tool_name) for c in chunks if c.tool_name]
    arguments = "".join(c.arguments or "" for c in chunks)
    return {
        "text": text_of(chunks),
        "calls": calls,
        "arguments": arguments,
        "usage": chunks[-1].usage,
        "finish": chunks[-1].finish_reason,
    }
