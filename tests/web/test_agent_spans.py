"""An agent's own exported spans join the attempt's trace.

The HTTP adapter sends a W3C ``traceparent`` on every turn; a real agent-protocol server on
127.0.0.1, instrumented with the OpenTelemetry SDK, continues that trace and exports a
``chat`` and an ``execute_tool`` span per turn with the SDK's OTLP/HTTP exporter to the
dashboard's receiver (``create_app`` under uvicorn) over the run's store. Whether the spans
arrive while the attempt runs (before it is stored) or after the run, the stored attempt
holds them under Seatrial's agent span and no production trace is left.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanProcessor

from seatrial import execute_suite
from seatrial.agent import HttpAgent
from seatrial.case import Case
from seatrial.config import load_config
from seatrial.store import Store, TraceQuery
from seatrial.testing import AgentServer
from seatrial.trace import Trace, TraceRecorder, attrs
from tests.agent._drive import drive, make_context
from tests.web.test_ingest import receiver

TURNS = ["我的订单到哪了？", "那什么时候能送到？"]
SUITE = f"""\
suite: order-status
cases:
  - id: order-status
    turns: ["{TURNS[0]}", "{TURNS[1]}"]
    assertions: [{{type: contains, value: 已发货}}]
"""


class TracedAgent:
    """An agent-protocol server whose handler continues the trace named by ``traceparent``
    (``opentelemetry.propagate.extract``) and exports a model call and a tool call per turn.

    ``batch`` holds every span until :meth:`flush` (a batch processor that never fires on
    its own); otherwise each span is exported as it ends, while the request is answered.
    """

    def __init__(self, receiver_url: str, *, batch: bool) -> None:
        exporter = OTLPSpanExporter(endpoint=f"{receiver_url}/v1/traces", timeout=10)
        processor: SpanProcessor = (
            BatchSpanProcessor(exporter, schedule_delay_millis=600_000)
            if batch
            else SimpleSpanProcessor(exporter)
        )
        self.provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
        self.provider.add_span_processor(processor)
        self._tracer = self.provider.get_tracer("support-bot")
        self.server = AgentServer(self._answer)

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        (headers,) = [r.headers for r in self.server.requests if r.body is request]
        parent = propagate.extract(headers)
        with self._tracer.start_as_current_span("chat gpt-4o", context=parent) as chat:
            chat.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "gpt-4o",
                    attrs.INPUT_TOKENS: 640,
                    attrs.OUTPUT_TOKENS: 22,
                }
            )
        with self._tracer.start_as_current_span(
            "execute_tool lookup_order", context=parent
        ) as tool:
            tool.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                    attrs.TOOL_NAME: "lookup_order",
                    attrs.TOOL_ARGUMENTS: '{"order_id": "A1029"}',
                }
            )
        return {"response": "您的订单已发货。"}

    def flush(self) -> None:
        """Export every span held so far."""
        assert self.provider.force_flush(timeout_millis=10_000)

    @property
    def url(self) -> str:
        return self.server.url


@contextmanager
def traced_agent(receiver_url: str, *, batch: bool) -> Iterator[TracedAgent]:
    """A :class:`TracedAgent` serving until the block ends."""
    agent = TracedAgent(receiver_url, batch=batch)
    with agent.server:
        try:
            yield agent
        finally:
            agent.provider.shutdown()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store, shared by the run and the receiver."""
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def run_suite(store: Store, agent: TracedAgent, tmp_path: Path) -> str:
    """Run the two-turn suite against the agent into ``store``; the run id."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    result = execute_suite(
        suite, agent.url, store=store, config=load_config(tmp_path), write_report_files=False
    )
    assert result.passed
    return result.run_id


def assert_agent_spans_joined(trace: Trace) -> None:
    """Seatrial's agent span first, then the agent's four spans under it, in start order."""
    root, *exported = trace.spans
    assert root.operation == attrs.OP_INVOKE_AGENT
    assert [span.operation for span in exported] == [
        attrs.OP_CHAT,
        attrs.OP_EXECUTE_TOOL,
        attrs.OP_CHAT,
        attrs.OP_EXECUTE_TOOL,
    ]
    assert {span.parent_span_id for span in exported} == {root.span_id}
    assert {span.trace_id for span in exported} == {trace.trace_id}
    assert [call.name for call in trace.tool_calls()] == ["lookup_order", "lookup_order"]
    assert [(call.model, call.input_tokens) for call in trace.model_calls()] == [
        ("gpt-4o", 640),
        ("gpt-4o", 640),
    ]


def test_spans_exported_while_the_attempt_runs_join_it_when_it_is_stored(
    store: Store, tmp_path: Path
) -> None:
    # Each span is exported as it ends, before the agent answers the turn: the receiver
    # stores them before the attempt exists.
    with receiver(store) as base, traced_agent(base, batch=False) as agent:
        run_id = run_suite(store, agent, tmp_path)

    assert_agent_spans_joined(store.attempt_trace(run_id, "order-status", 1))
    assert store.trace_heads(TraceQuery()) == []


def test_spans_exported_after_the_run_join_the_stored_attempt(store: Store, tmp_path: Path) -> None:
    with receiver(store) as base, traced_agent(base, batch=True) as agent:
        run_id = run_suite(store, agent, tmp_path)
        assert len(store.attempt_trace(run_id, "order-status", 1).spans) == 1
        agent.flush()

    assert_agent_spans_joined(store.attempt_trace(run_id, "order-status", 1))
    assert store.trace_heads(TraceQuery()) == []


CASE = Case(id="order-status", turns=TURNS)


async def test_every_turn_posts_a_traceparent_naming_the_attempts_trace_and_open_span() -> None:
    async with AgentServer(lambda request: "好的") as server:
        adapter = HttpAgent(server.url)
        ctx = make_context(CASE)
        _, trace = await drive(adapter, ctx)
        await adapter.aclose()

    (root,) = trace.spans
    sent = [request.headers.get("traceparent") for request in server.requests]
    assert sent == [f"00-{trace.trace_id}-{root.span_id}-01"] * 2


async def test_a_configured_traceparent_header_is_sent_instead_of_seatrials() -> None:
    theirs = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    async with AgentServer(lambda request: "好的") as server:
        adapter = HttpAgent(server.url, headers={"TraceParent": theirs})
        await drive(adapter, make_context(CASE))
        await adapter.aclose()

    assert [request.headers.get("traceparent") for request in server.requests] == [theirs] * 2


async def test_a_trace_id_that_is_not_a_w3c_id_sends_no_traceparent() -> None:
    ctx = dataclasses.replace(make_context(CASE), recorder=TraceRecorder("run-1-attempt-1"))
    async with AgentServer(lambda request: "好的") as server:
        adapter = HttpAgent(server.url)
        await drive(adapter, ctx)
        await adapter.aclose()

    assert [request.headers.get("traceparent") for request in server.requests] == [None] * 2
