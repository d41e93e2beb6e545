"""The Gateway itself: the order of a call, cassettes, the ledger, streaming, OTLP export."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from seatrial.errors import BudgetExceeded, CassetteMismatch, FallbackExhausted
from seatrial.gateway import (
    ChatRequest,
    Gateway,
    GatewayConfig,
    Message,
    ModelConfig,
    Price,
)
from seatrial.store import Store
from seatrial.testing import UNPARSABLE_TOOL_CALL, FakeOpenAI, FakeReply, Hang
from seatrial.trace import Span, TraceRecorder, spans_from_otlp
from seatrial.trace import attrs as A

KEY_ENV = "SEATRIAL_TEST_GATEWAY_KEY"
PRICE = Price(input_per_mtok=1.0, output_per_mtok=4.0)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-gateway")


def model(name: str, upstream: FakeOpenAI, **fields: Any) -> ModelConfig:
    return ModelConfig(
        name=name,
        model=f"{name}-v1",
        base_url=upstream.base_url,
        api_key_env=KEY_ENV,
        price=PRICE,
        **fields,
    )


def ask(text: str, **fields: Any) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], **fields)


@asynccontextmanager
async def gateway(config: GatewayConfig, **options: Any) -> AsyncIterator[Gateway]:
    opened = Gateway(config, **options)
    try:
        yield opened
    finally:
        await opened.aclose()


def chat_spans(recorder: TraceRecorder) -> list[Span]:
    return [s for s in recorder.spans if s.operation == A.OP_CHAT]


def model_call_view(span: Span) -> dict[str, Any]:
    """What a span says about a model call: its name, status and attributes, not its timing."""
    attributes = {k: v for k, v in span.attributes.items() if k != "seatrial.gateway.cassette"}
    return {"name": span.name, "status": span.status, "attributes": attributes}


async def test_each_call_writes_a_ledger_row_with_its_purpose_and_cost(tmp_path: Path) -> None:
    reply = FakeReply("ok", input_tokens=1000, output_tokens=100)
    async with FakeOpenAI(reply) as upstream:
        config = GatewayConfig(models={"m": model("m", upstream)})
        with Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
            async with gateway(config, store=store) as gw:
                agent = await gw.chat(ask("a", model="m", run_id="r1", case_id="c", attempt=1))
                judge = await gw.chat(ask("b", model="m", run_id="r1", purpose="judge"))
            by_purpose = store.spend_by_purpose("r1")
            rows = store.model_calls("r1", case_id="c", attempt=1)
    assert agent.cost_usd == pytest.approx((1000 * 1.0 + 100 * 4.0) / 1e6)
    assert by_purpose == {
        "agent": pytest.approx(agent.cost_usd),
        "judge": pytest.approx(judge.cost_usd),
    }
    [row] = rows
    assert (row.model, row.provider_model, row.input_tokens) == ("m", "m-v1", 1000)


async def test_a_failed_call_leaves_a_ledger_row_and_a_refused_one_none(tmp_path: Path) -> None:
    spends_the_budget = FakeReply("ok", input_tokens=600_000, output_tokens=0)
    script = [spends_the_budget, FakeReply(status=500), Hang()]
    async with FakeOpenAI(script) as upstream:
        timing_out = {"timeout_s": 0.3, "first_byte_timeout_s": 0.3}
        config = GatewayConfig(
            models={"m": model("m", upstream, max_retries=0, **timing_out)},
            budgets={"run_usd": 0.5},
        )
        with Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
            async with gateway(config, store=store) as gw:
                await gw.chat(ask("answered", model="m", run_id="r1", purpose="judge"))
                with pytest.raises(FallbackExhausted):
                    await gw.chat(ask("refused", model="m", run_id="r2"))
                with pytest.raises(FallbackExhausted):
                    await gw.chat(ask("too slow", model="m", run_id="r3", purpose="judge"))
                with pytest.raises(BudgetExceeded):  # r1 spent its budget: never sent
                    await gw.chat(ask("over budget", model="m", run_id="r1"))
            rows = [(r.run_id, r.purpose, r.status) for r in store.model_calls("r1")]
            rows += [(r.run_id, r.purpose, r.status) for r in store.model_calls("r2")]
            rows += [(r.run_id, r.purpose, r.status) for r in store.model_calls("r3")]
    assert rows == [("r1", "judge", "ok"), ("r2", "agent", "error"), ("r3", "judge", "timeout")]
    assert len(upstream.requests) == 3


async def test_a_run_budget_stops_new_calls_once_spent() -> None:
    reply = FakeReply("ok", input_tokens=600_000, output_tokens=0)
    async with FakeOpenAI(reply) as upstream:
        config = GatewayConfig(models={"m": model("m", upstream)}, budgets={"run_usd": 1.0})
        async with gateway(config) as gw:
            await gw.chat(ask("one", model="m", run_id="r"))
            await gw.chat(ask("two", model="m", run_id="r"))  # 1.2 USD spent now
            with pytest.raises(BudgetExceeded):
                await gw.chat(ask("three", model="m", run_id="r"))
            await gw.chat(ask("other run", model="m", run_id="other"))
            assert any("80%" in w or "run" in w for w in gw.warnings)
    assert len(upstream.requests) == 3


async def test_a_model_at_its_rate_limit_is_not_called_and_its_fallback_answers() -> None:
    async with FakeOpenAI("primary") as upstream, FakeOpenAI("spare") as spare:
        config = GatewayConfig(
            models={"m": model("m", upstream, rpm=1, fallbacks=["s"]), "s": model("s", spare)},
            max_limit_wait_s=0,
        )
        async with gateway(config) as gw:
            await gw.chat(ask("first", model="m"))
            second = await gw.chat(ask("second", model="m"))
    assert second.message.content == "spare" and second.fallback_used
    assert second.attempts[0].outcome == "rate_limit_wait"
    assert len(upstream.requests) == 1


async def test_a_chain_that_runs_out_names_every_try() -> None:
    async with FakeOpenAI(FakeReply(status=500)) as upstream:
        config = GatewayConfig(models={"m": model("m", upstream, max_retries=1)})
        recorder = TraceRecorder()
        async with gateway(config) as gw:
            with recorder.activate(), pytest.raises(FallbackExhausted) as raised:
                await gw.chat(ask("hi", model="m"))
    assert [a.outcome for a in raised.value.attempts] == ["server_error", "server_error"]
    [span] = chat_spans(recorder)
    # The span names what went wrong (the last try's outcome), not the exception's class.
    assert span.attributes[A.ERROR_TYPE] == "server_error"
    assert len(json.loads(span.attributes["seatrial.gateway.attempts"])) == 2


async def test_a_recorded_attempt_replays_with_identical_spans_and_no_upstream(
    tmp_path: Path,
) -> None:
    script = [FakeReply("first answer", input_tokens=10, output_tokens=2), "second answer"]
    who = {"model": "m", "run_id": "run-a", "case_id": "case-1", "attempt": 1}
    async with FakeOpenAI(script) as upstream:
        config = GatewayConfig(models={"m": model("m", upstream)}, cassette={"mode": "record"})
        recorded = TraceRecorder()
        async with gateway(config, project_dir=tmp_path) as gw:
            with recorded.activate():
                await gw.chat(ask("hello", **who))
                await gw.chat(ask("and then?", **who))
    replay_config = config.model_copy(
        update={"cassette": config.cassette.model_copy(update={"mode": "replay"})}
    )
    replayed = TraceRecorder()
    # Re-run the stored attempt under a new run id, the upstream gone.
    async with gateway(replay_config, project_dir=tmp_path, replay_run_id="run-a") as gw:
        with replayed.activate():
            first = await gw.chat(ask("hello", **{**who, "run_id": "run-b"}))
            second = await gw.chat(ask("and then?", **{**who, "run_id": "run-b"}))
            with pytest.raises(CassetteMismatch, match="was not recorded"):
                await gw.chat(ask("a third call", **{**who, "run_id": "run-b"}))
            assert gw.cassette is not None
            gw.cassette.for_attempt("run-b", "case-1", 1, source_run_id="run-a")
            with pytest.raises(CassetteMismatch, match="messages"):
                await gw.chat(ask("a changed question", **{**who, "run_id": "run-b"}))
    assert (first.message.content, second.message.content) == ("first answer", "second answer")
    assert [model_call_view(s) for s in chat_spans(replayed)[:2]] == [
        model_call_view(s) for s in chat_spans(recorded)
    ]
    assert chat_spans(replayed)[0].attributes["seatrial.gateway.cassette"] == "replay"


async def test_the_span_request_hash_names_the_request_the_cassette_and_the_cache_keep(
    tmp_path: Path,
) -> None:
    # The request is normalised once per call and shared: the span's hash is the hash of
    # the very request the cassette line holds, and an equal question hits the cache.
    who = {"model": "m", "run_id": "run-h", "case_id": "case-1", "attempt": 1}
    async with FakeOpenAI("an answer") as upstream:
        config = GatewayConfig(models={"m": model("m", upstream)}, cassette={"mode": "record"})
        recorder = TraceRecorder()
        async with gateway(config, project_dir=tmp_path) as gw:
            with recorder.activate():
                first = await gw.chat(ask("hello", purpose="judge", **who))
                again = await gw.chat(ask("hello", purpose="judge", **who))
            assert gw.cassette is not None
            lines = gw.cassette.path_for("run-h").read_text(encoding="utf-8").splitlines()
    recorded = [json.loads(line)["request"] for line in lines]
    text = json.dumps(recorded[0], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    hashes = [span.attributes["seatrial.gateway.request_hash"] for span in chat_spans(recorder)]
    assert recorded[0] == recorded[1]
    assert hashes == [hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]] * 2
    assert (first.cached, again.cached, len(upstream.requests)) == (False, True, 1)


async def test_a_stream_falls_back_when_the_primary_misses_its_first_byte() -> None:
    async with FakeOpenAI(Hang(5)) as slow, FakeOpenAI("backup speaking") as backup:
        config = GatewayConfig(
            models={
                "p": model("p", slow, fallbacks=["b"], first_byte_timeout_s=0.2, max_retries=0),
                "b": model("b", backup),
            }
        )
        recorder = TraceRecorder()
        async with gateway(config) as gw:
            with recorder.activate():
                chunks = [c async for c in gw.stream(ask("hi", model="p", stream=True))]
    assert "".join(c.content or "" for c in chunks) == "backup speaking"
    assert chunks[-1].usage is not None
    [span] = chat_spans(recorder)
    assert span.attributes["seatrial.gateway.fallback_used"] is True
    assert span.attributes[A.RESPONSE_MODEL] == "b-v1"


async def test_a_cached_answer_is_streamed_whole_without_asking_the_model() -> None:
    async with FakeOpenAI("cached words") as upstream:
        config = GatewayConfig(models={"m": model("m", upstream)})
        async with gateway(config) as gw:
            request = ask("judge this", model="m", purpose="judge", stream=True)
            first = [c async for c in gw.stream(request)]
            second = [c async for c in gw.stream(request)]
    text = ["".join(c.content or "" for c in chunks) for chunks in (first, second)]
    assert text == ["cached words", "cached words"]
    assert len(upstream.requests) == 1


class _Collector(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    received: list[Any]

    def do_POST(self) -> None:  # the name http.server dispatches to
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append(json.loads(body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@contextmanager
def otlp_collector() -> Iterator[tuple[str, list[Any]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", server.received  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_otlp_export_sends_every_failed_call_and_no_unsampled_success() -> None:
    script = ["fine", "fine", FakeReply(status=400), "fine"]
    with otlp_collector() as (endpoint, received):
        async with FakeOpenAI(script) as upstream:
            config = GatewayConfig(
                models={"m": model("m", upstream, max_retries=0)},
                tracing={"otlp_endpoint": endpoint, "sample_rate": 0.0},
            )
            async with gateway(config) as gw:
                for text in ("a", "b", "c", "d"):
                    try:
                        await gw.chat(ask(text, model="m"))
                    except Exception as exc:  # the scripted 400
                        assert "400" in str(exc) or "bad" in str(exc).lower()
    spans = [span for payload in received for span in spans_from_otlp(payload)]
    assert [(s.name, s.status) for s in spans] == [("chat m", "error")]


async def test_otlp_export_at_full_sampling_sends_every_call() -> None:
    with otlp_collector() as (endpoint, received):
        async with FakeOpenAI("fine") as upstream:
            config = GatewayConfig(
                models={"m": model("m", upstream)},
                tracing={"otlp_endpoint": endpoint, "sample_rate": 1.0},
            )
            async with gateway(config) as gw:
                for text in ("a", "b", "c"):
                    await gw.chat(ask(text, model="m"))
    spans = [span for payload in received for span in spans_from_otlp(payload)]
    assert len(spans) == 3
    assert all(s.attributes[A.INPUT_TOKENS] > 0 for s in spans)


# -- what a local model's server answers (llama.cpp, seen with Qwen2.5 and SmolLM2) -----------


@pytest.mark.parametrize(
    "said",
    [
        UNPARSABLE_TOOL_CALL,
        "Failed to parse input at pos 395: <|tool_call_start|>[search(q='x')]<|tool_call_end|>",
    ],
)
async def test_a_500_saying_the_models_output_is_unparsable_is_not_retried(said: str) -> None:
    async with FakeOpenAI(FakeReply(status=500, error=said)) as upstream:
        config = GatewayConfig(models={"m": model("m", upstream, max_retries=2)})
        async with gateway(config) as gw:
            with pytest.raises(FallbackExhausted) as failed:
                await gw.chat(ask("book it", model="m", temperature=0, seed=42))
        sent = len(upstream.requests)
    assert sent == 1  # a seeded, temperature-0 request would get the same output again
    assert [a.outcome for a in failed.value.attempts] == ["unparsable_output"]
    assert said[:40] in str(failed.value)


async def test_a_plain_500_is_retried_even_for_a_deterministic_request() -> None:
    script = [FakeReply(status=500, error="upstream overloaded"), FakeReply("fine")]
    async with FakeOpenAI(script) as upstream:
        config = GatewayConfig(models={"m": model("m", upstream, max_retries=2)})
        async with gateway(config) as gw:
            answer = await gw.chat(ask("book it", model="m", temperature=0, seed=42))
    assert answer.message.content == "fine"
    assert [a.outcome for a in answer.attempts] == ["server_error", "ok"]


async def test_a_whole_answer_slower_than_the_first_byte_timeout_is_waited_for() -> None:
    # A non-streamed call's first byte is its whole answer: a slow local model's normal.
    async with FakeOpenAI(FakeReply("slow but whole", delay_s=0.6)) as upstream:
        config = GatewayConfig(
            models={"m": model("m", upstream, first_byte_timeout_s=0.1, max_retries=0)}
        )
        async with gateway(config) as gw:
            answer = await gw.chat(ask("hi", model="m"))
    assert answer.message.content == "slow but whole"


async def test_a_stream_slower_than_the_first_byte_timeout_still_fails_fast() -> None:
    async with FakeOpenAI(FakeReply("late", delay_s=2)) as upstream:
        config = GatewayConfig(
            models={"m": model("m", upstream, first_byte_timeout_s=0.1, max_retries=0)}
        )
        async with gateway(config) as gw:
            with pytest.raises(FallbackExhausted, match="no first byte within 0.1 s"):
                async for _ in gw.stream(ask("hi", model="m", stream=True)):
                    pass
