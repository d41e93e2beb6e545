"""The OTLP/HTTP receiver, driven by the real OpenTelemetry SDK exporter against a real
uvicorn server: spans become stored, masked traces; the token is required when set; spans
of an attempt's trace join it; bad bodies get a collector's answers."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from google.rpc.status_pb2 import Status
from opentelemetry import trace as otel
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.store import Store, TraceQuery
from seatrial.trace import Span, Trace, attrs, trace_to_otlp
from seatrial.web import create_app
from tests.web.conftest import free_port, serve

TOKEN = "s3cret-token-for-otlp"
PHONE = "13812345678"
"""A mainland mobile number an agent put in a tool call: it must be stored masked."""
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def receiver(store: Store, **options: Any) -> Iterator[str]:
    """``create_app(store, **options)`` served by uvicorn on 127.0.0.1; yields the base URL."""
    port = free_port()
    config = uvicorn.Config(
        create_app(store, **options),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store."""
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def exporter_to(base: str, headers: dict[str, str] | None = None) -> OTLPSpanExporter:
    """The SDK's OTLP/HTTP protobuf exporter pointed at the receiver."""
    return OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers=headers or {}, timeout=10)


def record_agent_run(exporter: SpanExporter, *, parent: Any = None, batch: bool = False) -> None:
    """An agent run as an instrumented agent exports it: agent, two chats, a tool call."""
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("support-bot")
    with tracer.start_as_current_span("invoke_agent support", context=parent) as root:
        root.set_attributes({attrs.OPERATION: attrs.OP_INVOKE_AGENT, "user.id": "u-7"})
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "gpt-4o",
                    attrs.RESPONSE_MODEL: "gpt-4o-2024-08-06",
                    attrs.INPUT_TOKENS: 812,
                    attrs.OUTPUT_TOKENS: 57,
                }
            )
        with tracer.start_as_current_span("execute_tool lookup_order") as tool:
            tool.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                    attrs.TOOL_NAME: "lookup_order",
                    attrs.TOOL_CALL_ID: "call_1",
                    attrs.TOOL_ARGUMENTS: json.dumps({"phone": PHONE}),
                    attrs.TOOL_RESULT: '{"order_id": "A1029"}',
                    "vendor.region": "cn-east",
                }
            )
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "gpt-4o",
                    attrs.INPUT_TOKENS: 1020,
                    attrs.OUTPUT_TOKENS: 33,
                }
            )
    provider.shutdown()


def only_trace(store: Store) -> Trace:
    """The one ingested trace in the store."""
    (head,) = store.trace_heads(TraceQuery())
    return store.ingested_trace(head.trace_id)


def test_sdk_exporter_protobuf_spans_become_a_stored_masked_trace(
    store: Store, tmp_path: Path
) -> None:
    with receiver(store, token=TOKEN) as base:
        record_agent_run(exporter_to(base, BEARER), batch=True)

    (head,) = store.trace_heads(TraceQuery())
    assert head.source == "otlp"
    assert head.service == "support-bot"
    assert head.span_count == 4
    assert head.models == ["gpt-4o-2024-08-06", "gpt-4o"]
    assert head.tools == ["lookup_order"]
    assert (head.input_tokens, head.output_tokens) == (1832, 90)
    assert head.user_id == "u-7"
    assert head.masked == {"phone": 1}
    trace = store.ingested_trace(head.trace_id)
    assert [span.operation for span in trace.spans] == [
        attrs.OP_INVOKE_AGENT,
        attrs.OP_CHAT,
        attrs.OP_EXECUTE_TOOL,
        attrs.OP_CHAT,
    ]
    (call,) = trace.tool_calls()
    assert call.name == "lookup_order"
    assert call.arguments == {"phone": "<PHONE_1>"}
    assert call.span.attributes["vendor.region"] == "cn-east"
    assert trace.resource["service.name"] == "support-bot"
    assert PHONE.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("seatrial.db*"))


def test_otlp_json_posts_plain_and_gzip_are_stored_and_answered_in_json(store: Store) -> None:
    plain = seatrial_trace("01" * 16)
    zipped = seatrial_trace("02" * 16)
    with receiver(store) as base:
        first = httpx.post(f"{base}/v1/traces", json=trace_to_otlp(plain, "billing-bot"))
        second = httpx.post(
            f"{base}/v1/traces",
            content=gzip.compress(json.dumps(trace_to_otlp(zipped, "billing-bot")).encode()),
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )

    for answer in (first, second):
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        assert answer.json() == {}
    for trace_id in (plain.trace_id, zipped.trace_id):
        head = store.trace_head(trace_id)
        assert head.service == "billing-bot"
        assert head.tools == ["refund"]
        assert head.models == ["qwen-max"]
        assert (head.input_tokens, head.output_tokens) == (300, 20)
        stored = store.ingested_trace(trace_id)
        assert stored.tool_calls()[0].arguments == {"order_id": "A1029", "phone": "<PHONE_1>"}


def seatrial_trace(trace_id: str) -> Trace:
    """A chat and a tool call, as Seatrial's own OTLP/JSON export writes them."""
    start = 1_764_000_000_000_000_000
    return Trace(
        trace_id=trace_id,
        spans=[
            Span(
                trace_id=trace_id,
                span_id="0000000000000001",
                name="chat qwen-max",
                start_time_unix_nano=start,
                end_time_unix_nano=start + 10**9,
                attributes={
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "qwen-max",
                    attrs.INPUT_TOKENS: 300,
                    attrs.OUTPUT_TOKENS: 20,
                },
            ),
            Span(
                trace_id=trace_id,
                span_id="0000000000000002",
                parent_span_id="0000000000000001",
                name="execute_tool refund",
                start_time_unix_nano=start + 2 * 10**9,
                end_time_unix_nano=start + 3 * 10**9,
                attributes={
                    attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                    attrs.TOOL_NAME: "refund",
                    attrs.TOOL_ARGUMENTS: json.dumps({"order_id": "A1029", "phone": PHONE}),
                },
            ),
        ],
    )


def test_openinference_spans_are_stored_with_genai_names_and_their_own_kept(
    store: Store,
) -> None:
    with receiver(store) as base:
        provider = TracerProvider(resource=Resource.create({"service.name": "phoenix-app"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter_to(base)))
        tracer = provider.get_tracer("openinference.instrumentation.openai")
        with tracer.start_as_current_span("Agent") as agent:
            agent.set_attributes({"openinference.span.kind": "AGENT", "session.id": "s-9"})
            with tracer.start_as_current_span("ChatCompletion") as llm:
                llm.set_attributes(
                    {
                        "openinference.span.kind": "LLM",
                        "llm.model_name": "gpt-4o-mini",
                        "llm.token_count.prompt": 120,
                        "llm.token_count.completion": 15,
                        "llm.input_messages.0.message.role": "user",
                        "llm.input_messages.0.message.content": f"call me at {PHONE}",
                    }
                )
            with tracer.start_as_current_span("get_weather") as tool:
                tool.set_attributes(
                    {
                        "openinference.span.kind": "TOOL",
                        "tool.name": "get_weather",
                        "input.value": '{"city": "Hangzhou"}',
                    }
                )
        provider.shutdown()

    (head,) = store.trace_heads(TraceQuery(service="phoenix-app"))
    assert head.models == ["gpt-4o-mini"]
    assert head.tools == ["get_weather"]
    assert (head.input_tokens, head.output_tokens) == (120, 15)
    assert head.session_id == "s-9"
    trace = store.ingested_trace(head.trace_id)
    assert trace.tool_calls()[0].arguments == {"city": "Hangzhou"}
    llm_span = trace.model_calls()[0].span
    assert llm_span.attributes["openinference.span.kind"] == "LLM"
    assert llm_span.attributes["llm.input_messages.0.message.content"] == "call me at <PHONE_1>"


def test_with_a_token_an_export_without_it_is_refused_and_nothing_stored(store: Store) -> None:
    spans = InMemorySpanExporter()
    record_agent_run(spans)
    finished = spans.get_finished_spans()
    with receiver(store, token=TOKEN) as base:
        without = exporter_to(base).export(finished)
        wrong = exporter_to(base, {"Authorization": "Bearer nope"}).export(finished)
        raw = httpx.post(f"{base}/v1/traces", json={"resourceSpans": []})
        with_it = exporter_to(base, BEARER).export(finished)

    assert without == wrong == SpanExportResult.FAILURE
    assert raw.status_code == 401
    assert with_it == SpanExportResult.SUCCESS
    assert len(store.trace_heads(TraceQuery())) == 1


def test_without_a_token_a_loopback_only_server_refuses_other_host_names(store: Store) -> None:
    with receiver(store, loopback_only=True) as base:
        foreign = httpx.post(
            f"{base}/v1/traces", json={"resourceSpans": []}, headers={"Host": "evil.example"}
        )
        local = httpx.post(f"{base}/v1/traces", json={"resourceSpans": []})

    assert foreign.status_code == 403
    assert local.status_code == 200


def test_spans_exported_with_an_attempts_trace_id_join_that_attempt(
    store: Store,
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    store.create_run(RunInfo(run_id="r1", suite="s", agent="http://agent"), [])
    attempt = make_attempt("r1")
    store.save_attempts([attempt])
    assert attempt.trace is not None
    context = otel.set_span_in_context(
        NonRecordingSpan(
            SpanContext(
                trace_id=int(attempt.trace.trace_id, 16),
                span_id=0x1234,
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
        )
    )

    with receiver(store) as base:
        record_agent_run(exporter_to(base), parent=context)

    stored = store.attempt_trace("r1", attempt.case_id, attempt.attempt)
    assert len(stored.spans) == len(attempt.trace.spans) + 4
    assert "lookup_order" in {call.name for call in stored.tool_calls()}
    assert store.trace_heads(TraceQuery()) == []


@pytest.fixture
def make_attempt() -> Callable[..., AttemptRecord]:
    """An attempt whose trace has an agent span with a 32-hex-digit trace id."""

    def make(run_id: str) -> AttemptRecord:
        trace_id = "c0ffee" + "0" * 26
        trace = Trace(
            trace_id=trace_id,
            spans=[
                Span(
                    trace_id=trace_id,
                    span_id="00000000000000a0",
                    name="invoke_agent support",
                    start_time_unix_nano=1_764_000_000_000_000_000,
                    end_time_unix_nano=1_764_000_001_000_000_000,
                    attributes={attrs.OPERATION: attrs.OP_INVOKE_AGENT},
                )
            ],
        )
        return AttemptRecord(
            run_id=run_id,
            case_id="order-status",
            attempt=1,
            verdict="PASS",
            reason="ok",
            metrics=Metrics.of(trace),
            response="done",
            user_id="u",
            session_id="s",
            started_at=1_764_000_000.0,
            finished_at=1_764_000_001.0,
            trace=trace,
        )

    return make


@pytest.mark.parametrize(
    ("headers", "body", "status", "says"),
    [
        ({"Content-Type": "text/plain"}, b"hello", 415, "Content-Type must be"),
        (
            {"Content-Type": "application/json", "Content-Encoding": "br"},
            b"{}",
            415,
            "Content-Encoding must be gzip",
        ),
        ({"Content-Type": "application/json"}, f'{{"x": "{PHONE}"'.encode(), 400, "not JSON"),
        (
            {"Content-Type": "application/json"},
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": PHONE}]}]}]}),
            400,
            "not an OTLP trace export",
        ),
        (
            {"Content-Type": "application/json", "Content-Encoding": "gzip"},
            PHONE.encode(),
            400,
            "not valid gzip",
        ),
        (
            {"Content-Type": "application/json", "Content-Encoding": "gzip"},
            gzip.compress(b" " * (33 * 1024 * 1024)),
            413,
            "over 32 MiB",
        ),
    ],
)
def test_bad_requests_get_a_status_that_never_quotes_the_body(
    store: Store, headers: dict[str, str], body: bytes | str, status: int, says: str
) -> None:
    with receiver(store) as base:
        answer = httpx.post(f"{base}/v1/traces", content=body, headers=headers)

    assert answer.status_code == status
    assert says in answer.json()["message"]
    assert answer.json()["code"] in (3, 8)
    assert PHONE not in answer.text
    assert store.trace_heads(TraceQuery()) == []


def test_protobuf_requests_are_answered_in_protobuf(store: Store) -> None:
    with receiver(store) as base:
        good = httpx.post(
            f"{base}/v1/traces", content=b"", headers={"Content-Type": "application/x-protobuf"}
        )
        bad = httpx.post(
            f"{base}/v1/traces",
            content=b"\xff\xff\xff",
            headers={"Content-Type": "application/x-protobuf"},
        )

    assert good.status_code == 200
    assert good.headers["content-type"] == "application/x-protobuf"
    ExportTraceServiceResponse.FromString(good.content)
    assert bad.status_code == 400
    assert "not an OTLP ExportTraceServiceRequest" in Status.FromString(bad.content).message


def test_seatrial_serve_receives_sdk_spans_masked_with_the_projects_settings(
    tmp_path: Path,
) -> None:
    """The command itself, as a user starts it: token from the option, `mask:` from the
    seatrial.yaml of the folder it starts in (a listed name), the SDK's protobuf exporter."""
    (tmp_path / "seatrial.yaml").write_text("mask:\n  names: [Zhang Wei]\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    Store.open(url).close()
    with serve(url, tmp_path, "--token", TOKEN) as base:
        refused = httpx.post(
            f"{base}/v1/traces", content=b"", headers={"Content-Type": "application/x-protobuf"}
        )
        provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter_to(base, BEARER)))
        tracer = provider.get_tracer("support-bot")
        with tracer.start_as_current_span("invoke_agent support") as root:
            root.set_attributes({attrs.OPERATION: attrs.OP_INVOKE_AGENT})
            with tracer.start_as_current_span("execute_tool lookup_order") as tool:
                tool.set_attributes(
                    {
                        attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                        attrs.TOOL_NAME: "lookup_order",
                        attrs.TOOL_ARGUMENTS: json.dumps({"name": "Zhang Wei", "phone": PHONE}),
                    }
                )
        provider.shutdown()

    assert refused.status_code == 401
    with Store.open(url) as store:
        (head,) = store.trace_heads(TraceQuery())
        (call,) = store.ingested_trace(head.trace_id).tool_calls()
    assert call.arguments == {"name": "<NAME_1>", "phone": "<PHONE_1>"}
    assert head.masked == {"name": 1, "phone": 1}
    written = b"".join(path.read_bytes() for path in tmp_path.iterdir() if path.is_file())
    assert PHONE.encode() not in written and b"Zhang Wei" not in written.replace(
        b"names: [Zhang Wei]", b""
    )


def test_exports_posted_at_once_are_all_stored_with_one_token_per_value(
    store: Store, tmp_path: Path
) -> None:
    other = "13998765432"
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("support-bot")
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute(attrs.OPERATION, attrs.OP_INVOKE_AGENT)
        for call in range(8):
            with tracer.start_as_current_span("execute_tool lookup_order") as tool:
                phone = PHONE if call % 2 == 0 else other
                tool.set_attributes(
                    {
                        attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                        attrs.TOOL_NAME: "lookup_order",
                        attrs.TOOL_CALL_ID: f"call_{call}",
                        attrs.TOOL_ARGUMENTS: json.dumps({"phone": phone}),
                    }
                )
    provider.shutdown()
    spans = memory.get_finished_spans()
    # One export per span, all sent at once: several are masked and stored side by side.
    bodies = [encode_spans([span]).SerializeToString() for span in spans]
    headers = {"Content-Type": "application/x-protobuf"}
    with receiver(store) as base, httpx.Client(timeout=30) as client:

        def post(body: bytes) -> int:
            return client.post(f"{base}/v1/traces", content=body, headers=headers).status_code

        with ThreadPoolExecutor(len(bodies)) as pool:
            assert list(pool.map(post, bodies)) == [200] * len(bodies)

    (head,) = store.trace_heads(TraceQuery())
    assert head.span_count == len(spans) == 9
    assert head.masked == {"phone": 8}
    trace = store.ingested_trace(head.trace_id)
    tokens = {
        call.span.attributes[attrs.TOOL_CALL_ID]: call.arguments["phone"]
        for call in trace.tool_calls()
    }
    assert len(tokens) == 8
    # Whichever export came first, one number keeps one token and the two never share one.
    assert len({tokens[f"call_{n}"] for n in range(0, 8, 2)}) == 1
    assert len({tokens[f"call_{n}"] for n in range(1, 8, 2)}) == 1
    assert set(tokens.values()) == {"<PHONE_1>", "<PHONE_2>"}
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("seatrial.db*"))
    assert PHONE.encode() not in stored and other.encode() not in stored
