"""Traces written by the real OpenAI instrumentations, as an agent in production exports them.

The ``openai`` client talks to :class:`seatrial.testing.FakeOpenAI` on 127.0.0.1; the
instrumentation under test (Arize's OpenInference, traceloop's OpenLLMetry, the OTel contrib
GenAI one) records the model calls through the real OpenTelemetry SDK into an in-memory
exporter, and the spans are encoded as the SDK's OTLP exporters encode them (protobuf, and its
JSON mapping for a file). None of these instrumentations traces the tools the agent runs: the
tool calls live only in the messages.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import openai
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from seatrial.testing import FakeOpenAI, FakeReply, FakeToolCall

FIRST_TURN = "Where is order A1001?"
SECOND_TURN = "It arrived broken, please refund it"
LOOKUP = {"order_id": "A1001"}
LOOKUP_RESULT = {"order_id": "A1001", "status": "delivered"}
REFUND = {"order_id": "A1001", "reason": "damaged"}
REFUND_RESULT = {"refund_id": "R-77", "status": "started"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
    for name in ("lookup_order", "issue_refund")
]
SCRIPT = [
    FakeReply(tool_calls=[FakeToolCall("lookup_order", LOOKUP, id="call_lookup")]),
    "Order A1001 was delivered yesterday.",
    FakeReply(tool_calls=[FakeToolCall("issue_refund", REFUND, id="call_refund")]),
    "Your refund R-77 has started.",
]
SERVICE = "support-bot"


def _openinference() -> Any:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openllmetry() -> Any:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _otel_genai() -> Any:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    return OpenAIInstrumentor()


INSTRUMENTATIONS: dict[str, Callable[[], Any]] = {
    "openinference": _openinference,
    "openllmetry": _openllmetry,
    "otel-genai": _otel_genai,
}
"""Each real instrumentation package by the name the tests use."""
CONTENT_ENV = {
    # The OTel contrib instrumentation records message content only when asked, and in the
    # current GenAI conventions (gen_ai.input.messages) only with the opt-in.
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    "TRACELOOP_TRACE_CONTENT": "true",
}


@contextmanager
def _instrumented(name: str) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with warnings.catch_warnings():
        if name == "openllmetry":
            # traceloop's package imports a pydantic model with a class-based config when it
            # instruments, which pydantic 2 warns about: their warning, not a behaviour here.
            warnings.simplefilter("ignore", DeprecationWarning)
        instrumentor = INSTRUMENTATIONS[name]()
        instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def _run_tool(name: str) -> dict[str, Any]:
    return LOOKUP_RESULT if name == "lookup_order" else REFUND_RESULT


def _answer(client: openai.OpenAI, messages: list[dict[str, Any]]) -> None:
    """One user turn of a tool-calling agent: call the model until it stops asking for tools."""
    while True:
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            result = _run_tool(call.function.name)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )


def record_conversation(name: str) -> tuple[ReadableSpan, ...]:
    """Two user turns with a tool call each, traced by instrumentation ``name``."""
    with FakeOpenAI(SCRIPT) as server, _instrumented(name) as (provider, exporter):
        client = openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0)
        # The agent's own span around the conversation (a web framework's request span in
        # production) makes the model calls one trace.
        with provider.get_tracer("support-bot").start_as_current_span("conversation"):
            messages: list[dict[str, Any]] = [{"role": "user", "content": FIRST_TURN}]
            _answer(client, messages)
            messages.append({"role": "user", "content": SECOND_TURN})
            _answer(client, messages)
        client.close()
        return exporter.get_finished_spans()


def otlp_protobuf(spans: tuple[ReadableSpan, ...]) -> bytes:
    """The ``ExportTraceServiceRequest`` the SDK's OTLP exporters send for ``spans``."""
    return encode_spans(spans).SerializeToString()  # type: ignore[no-any-return]


def otlp_json(spans: tuple[ReadableSpan, ...]) -> dict[str, Any]:
    """``spans`` as OTLP/JSON: protobuf's JSON mapping of the same export (base64 ids)."""
    return MessageToDict(encode_spans(spans))
