"""Ingested production traces in the store, on SQLite and PostgreSQL: saving, a re-sent span
skipped, summaries over batches, spans joining an attempt, and the browser's filters."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from seatrial.errors import InputError
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, TraceCheck, TraceQuery
from seatrial.trace import Span, SpanEvent, Trace, attrs

T0 = 1_764_000_000_000_000_000
"""2025-11-24, in nanoseconds: the first span's start."""


@pytest.fixture
def trace_store(db_url: str) -> Iterator[Store]:
    """An open store without ingested traces (the shared fixture empties only the runs)."""
    with Store.open(db_url) as opened:
        if opened.engine.dialect.name == "postgresql":
            with opened.engine.begin() as connection:
                connection.exec_driver_sql("TRUNCATE traces CASCADE")
        yield opened


def chat(trace_id: str, span_id: str, at: int, model: str, tokens: tuple[int, int]) -> Span:
    """A model call span as an instrumented agent exports it."""
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id="a0",
        name=f"chat {model}",
        start_time_unix_nano=at,
        end_time_unix_nano=at + 800_000_000,
        attributes={
            attrs.OPERATION: attrs.OP_CHAT,
            attrs.REQUEST_MODEL: model,
            attrs.INPUT_TOKENS: tokens[0],
            attrs.OUTPUT_TOKENS: tokens[1],
            attrs.CONVERSATION_ID: "conv-7",
        },
        status="ok",
    )


def tool(trace_id: str, span_id: str, at: int, name: str, failed: bool = False) -> Span:
    """A tool call span, failed or not."""
    values: dict[str, Any] = {
        attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
        attrs.TOOL_NAME: name,
        attrs.TOOL_ARGUMENTS: '{"order_id": "A1029"}',
        "vendor.custom": [1, 2],
    }
    if failed:
        values[attrs.ERROR_TYPE] = "TimeoutError"
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id="a0",
        name=f"execute_tool {name}",
        start_time_unix_nano=at,
        end_time_unix_nano=at + 200_000_000,
        attributes=values,
        events=[SpanEvent(name="retry", time_unix_nano=at + 1, attributes={"n": 1})],
        status="error" if failed else "ok",
        status_message="timed out" if failed else "",
    )


def agent(trace_id: str, at: int, end: int, tokens: tuple[int, int] = (0, 0)) -> Span:
    """The agent's own span, which ends last (and so is often exported last)."""
    return Span(
        trace_id=trace_id,
        span_id="a0",
        name="invoke_agent support",
        start_time_unix_nano=at,
        end_time_unix_nano=end,
        attributes={
            attrs.OPERATION: attrs.OP_INVOKE_AGENT,
            attrs.INPUT_TOKENS: tokens[0],
            attrs.OUTPUT_TOKENS: tokens[1],
            "user.id": "u-42",
        },
        status="ok",
    )


def production(trace_id: str = "ab" * 16, service: str = "support-bot") -> Trace:
    """A whole trace: an agent span around two model calls and a tool call."""
    spans = [
        agent(trace_id, T0, T0 + 5_000_000_000),
        chat(trace_id, "c1", T0 + 1_000_000, "gpt-4o", (900, 40)),
        tool(trace_id, "t1", T0 + 900_000_000, "lookup_order"),
        chat(trace_id, "c2", T0 + 1_200_000_000, "gpt-4o-mini", (1200, 60)),
    ]
    return Trace(trace_id=trace_id, spans=spans, resource={"service.name": service})


def test_a_saved_trace_comes_back_with_its_spans_resource_and_summary(
    trace_store: Store,
) -> None:
    trace = production()
    outcome = trace_store.save_ingested(
        [trace], source="otlp", masked={trace.trace_id: {"phone": 2}}
    )

    assert (outcome.traces, outcome.spans, outcome.joined_attempts) == (1, 4, 0)
    assert outcome.duplicate_spans == 0
    assert outcome.masked == {"phone": 2}
    assert trace_store.ingested_trace(trace.trace_id) == trace
    head = trace_store.trace_head(trace.trace_id)
    assert head.source == "otlp"
    assert head.service == "support-bot"
    assert head.session_id == "conv-7"
    assert head.user_id == "u-42"
    assert head.span_count == 4
    assert head.tools == ["lookup_order"]
    assert head.models == ["gpt-4o", "gpt-4o-mini"]
    assert (head.input_tokens, head.output_tokens) == (2100, 100)
    assert head.started_at == pytest.approx(T0 / 1e9)
    assert head.finished_at == pytest.approx((T0 + 5_000_000_000) / 1e9)
    assert head.error is False
    assert head.masked == {"phone": 2}
    assert head.checks == []


def test_a_re_sent_span_is_skipped_and_a_new_one_of_the_same_trace_appended(
    trace_store: Store,
) -> None:
    trace = production()
    trace_store.save_ingested([trace], source="otlp")
    retry = trace.model_copy(update={"spans": trace.spans[1:3]})
    late = tool(trace.trace_id, "t2", T0 + 1_500_000_000, "refund", failed=True)
    more = Trace(trace_id=trace.trace_id, spans=[trace.spans[3], late])

    again = trace_store.save_ingested([retry], source="otlp")
    extended = trace_store.save_ingested([more], source="otlp")

    assert (again.spans, again.duplicate_spans) == (0, 2)
    assert (extended.spans, extended.duplicate_spans) == (1, 1)
    stored = trace_store.ingested_trace(trace.trace_id)
    assert [span.span_id for span in stored.spans] == ["a0", "c1", "t1", "c2", "t2"]
    head = trace_store.trace_head(trace.trace_id)
    assert head.span_count == 5
    assert head.tools == ["lookup_order", "refund"]
    assert head.error is True
    assert (head.input_tokens, head.output_tokens) == (2100, 100)


def test_a_span_repeated_inside_one_batch_is_stored_once(trace_store: Store) -> None:
    trace = production()
    doubled = trace.model_copy(update={"spans": [*trace.spans, trace.spans[1]]})

    outcome = trace_store.save_ingested([doubled], source="openinference")

    assert (outcome.spans, outcome.duplicate_spans) == (4, 1)
    assert trace_store.trace_head(trace.trace_id).span_count == 4


def test_a_trace_split_over_batches_sums_up_as_if_sent_whole(trace_store: Store) -> None:
    whole = production("01" * 16)
    split = production("02" * 16)
    trace_store.save_ingested([whole], source="otlp", masked={whole.trace_id: {"phone": 3}})
    # The agent span ends last, so a batching exporter sends it in a later request.
    for part, masked in ((split.spans[1:], {"phone": 1}), (split.spans[:1], {"phone": 2})):
        batch = Trace(trace_id=split.trace_id, spans=part, resource=split.resource)
        trace_store.save_ingested([batch], source="otlp", masked={split.trace_id: masked})

    first = trace_store.trace_head(whole.trace_id).model_dump(exclude={"trace_id", "received_at"})
    second = trace_store.trace_head(split.trace_id).model_dump(exclude={"trace_id", "received_at"})
    assert first == second


def test_agent_span_usage_counts_only_for_a_trace_without_model_calls(
    trace_store: Store,
) -> None:
    trace_id = "0a" * 16
    only_agent = Trace(trace_id=trace_id, spans=[agent(trace_id, T0, T0 + 10, (300, 20))])
    with_calls = production("0b" * 16)
    with_calls.spans[0] = agent(with_calls.trace_id, T0, T0 + 10, (5000, 500))

    trace_store.save_ingested([only_agent, with_calls], source="swe-agent")

    assert trace_store.trace_head(trace_id).input_tokens == 300
    assert trace_store.trace_head(with_calls.trace_id).input_tokens == 2100


def test_spans_with_an_attempts_trace_id_join_that_attempt(
    trace_store: Store,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    trace_store.create_run(run, [])
    attempt = make_attempt(run.run_id)
    assert attempt.trace is not None
    trace_store.save_attempts([attempt])
    trace_id = attempt.trace.trace_id
    own = tool(trace_id, "agent-own-1", T0, "search_kb")
    exported = Trace(trace_id=trace_id, spans=[own, attempt.trace.spans[0]])

    outcome = trace_store.save_ingested([exported], source="otlp")

    assert (outcome.joined_attempts, outcome.traces, outcome.spans) == (1, 0, 1)
    assert outcome.duplicate_spans == 1
    stored = trace_store.attempt_trace(run.run_id, attempt.case_id, attempt.attempt)
    assert len(stored.spans) == len(attempt.trace.spans) + 1
    assert "agent-own-1" in {span.span_id for span in stored.spans}
    assert trace_store.trace_heads(TraceQuery()) == []


def test_filters_select_by_time_service_tool_error_and_failed_check(
    trace_store: Store,
) -> None:
    early = production("01" * 16, service="support-bot")
    late = production("02" * 16, service="billing-bot")
    late.spans[:] = [
        span.model_copy(update={"start_time_unix_nano": span.start_time_unix_nano + 3600 * 10**9})
        for span in late.spans
    ]
    late.spans.append(tool(late.trace_id, "t9", T0 + 3601 * 10**9, "refund", failed=True))
    trace_store.save_ingested([early, late], source="otlp")
    trace_store.record_trace_checks(
        early.trace_id,
        [
            TraceCheck(id="no-refund", type="tool_not_called", verdict="fail", reason="x"),
            TraceCheck(id="polite", type="contains", verdict="pass"),
        ],
    )
    trace_store.record_trace_checks(
        late.trace_id, [TraceCheck(id="polite", type="contains", verdict="fail")]
    )

    def ids(**filters: Any) -> list[str]:
        return [head.trace_id for head in trace_store.trace_heads(TraceQuery(**filters))]

    assert ids() == [late.trace_id, early.trace_id]
    assert ids(since=T0 / 1e9 + 60) == [late.trace_id]
    assert ids(until=T0 / 1e9 + 60) == [early.trace_id]
    assert ids(service="support-bot") == [early.trace_id]
    assert ids(service="support") == []
    assert ids(tool="refund") == [late.trace_id]
    assert ids(tool="lookup_order") == [late.trace_id, early.trace_id]
    assert ids(tool="lookup") == []
    assert ids(error=True) == [late.trace_id]
    assert ids(error=False) == [early.trace_id]
    assert ids(failed_check="no-refund") == [early.trace_id]
    assert ids(failed_check="polite") == [late.trace_id]
    assert ids(limit=1, offset=1) == [early.trace_id]
    assert trace_store.trace_check_ids() == ["no-refund", "polite"]


def test_a_check_run_again_replaces_its_verdict(trace_store: Store) -> None:
    trace = production()
    trace_store.save_ingested([trace], source="otlp")
    failed = TraceCheck(id="polite", type="contains", verdict="fail", reason="rude")
    trace_store.record_trace_checks(trace.trace_id, [failed])

    trace_store.record_trace_checks(
        trace.trace_id, [TraceCheck(id="polite", type="contains", verdict="pass")]
    )

    assert [c.verdict for c in trace_store.trace_head(trace.trace_id).checks] == ["pass"]
    assert trace_store.trace_check_ids() == []


def test_an_unknown_trace_id_says_how_to_find_the_stored_ones(trace_store: Store) -> None:
    for read in (trace_store.trace_head, trace_store.ingested_trace):
        with pytest.raises(InputError, match="Traces page lists"):
            read("ff" * 16)
    with pytest.raises(InputError, match="no ingested trace"):
        trace_store.record_trace_checks("ff" * 16, [])
