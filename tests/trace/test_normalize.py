"""OpenInference and older GenAI attributes mapped onto the GenAI names every check reads."""

from __future__ import annotations

import json

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from seatrial.trace import (
    Span,
    SpanEvent,
    Trace,
    normalize_span,
    normalize_trace,
    traces_from_otlp_protobuf,
)
from seatrial.trace import attrs as A
from seatrial.trace._normalize import _normalized


def span(attributes: dict[str, object], name: str = "s", **fields: object) -> Span:
    return Span(
        trace_id="a" * 32,
        span_id="b" * 16,
        name=name,
        start_time_unix_nano=1,
        end_time_unix_nano=2,
        attributes=attributes,
        **fields,  # type: ignore[arg-type]
    )


OI_LLM = {
    "openinference.span.kind": "LLM",
    "llm.model_name": "gpt-4o",
    "llm.provider": "openai",
    "llm.token_count.prompt": 120,
    "llm.token_count.completion": 30,
    "llm.cost.total": 0.002,
    "session.id": "sess-1",
    "llm.input_messages.0.message.role": "system",
    "llm.input_messages.0.message.content": "Be brief.",
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.contents.0.message_content.type": "text",
    "llm.input_messages.1.message.contents.0.message_content.text": "Where is order 7?",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_order",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"id": "7"}',
    "llm.tools.0.tool.json_schema": '{"type": "function"}',
}


def test_an_openinference_llm_span_becomes_a_chat_call_with_model_tokens_and_messages():
    normalized = normalize_span(span(OI_LLM, name="ChatCompletion"))
    trace = Trace(trace_id="a" * 32, spans=[normalized])
    (call,) = trace.model_calls()
    assert (call.model, call.input_tokens, call.output_tokens) == ("gpt-4o", 120, 30)
    assert call.cost_usd == 0.002
    attributes = normalized.attributes
    assert attributes[A.PROVIDER_NAME] == "openai"
    assert attributes[A.CONVERSATION_ID] == "sess-1"
    assert json.loads(attributes[A.INPUT_MESSAGES]) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Where is order 7?"}]},
    ]
    assert json.loads(attributes[A.OUTPUT_MESSAGES]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "call_1", "name": "get_order", "arguments": {"id": "7"}}
            ],
        }
    ]
    # The original attributes stay, unknown ones included, and the name is kept.
    assert {k: attributes[k] for k in OI_LLM} == OI_LLM
    assert normalized.name == "ChatCompletion"


def test_an_openinference_tool_span_takes_its_arguments_from_input_value_not_its_schema():
    tool = span(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "cancel_order",
            "tool.parameters": '{"type": "object", "properties": {"id": {}}}',
            "input.value": '{"id": "9"}',
            "output.value": '{"cancelled": true}',
        },
        name="cancel_order",
    )
    (call,) = Trace(trace_id="a" * 32, spans=[normalize_span(tool)]).tool_calls()
    assert (call.name, call.arguments, call.result) == (
        "cancel_order",
        {"id": "9"},
        {"cancelled": True},
    )


def test_a_tool_span_without_tool_name_is_named_after_the_span():
    tool = span({"openinference.span.kind": "TOOL", "input.value": "{}"}, name="lookup")
    assert normalize_span(tool).attributes[A.TOOL_NAME] == "lookup"


def test_openllmetry_names_map_onto_current_genai_names():
    old = span(
        {
            "llm.request.type": "chat",
            "gen_ai.system": "Anthropic",
            "gen_ai.request.model": "claude-3-5-sonnet",
            "gen_ai.usage.prompt_tokens": 40,
            "gen_ai.usage.completion_tokens": 8,
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Refund order 5",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_use",
            "gen_ai.completion.0.tool_calls.0.id": "t1",
            "gen_ai.completion.0.tool_calls.0.name": "refund",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"order": 5}',
        },
        name="anthropic.chat",
    )
    attributes = normalize_span(old).attributes
    assert attributes[A.OPERATION] == A.OP_CHAT
    assert attributes[A.PROVIDER_NAME] == "Anthropic"
    assert (attributes[A.INPUT_TOKENS], attributes[A.OUTPUT_TOKENS]) == (40, 8)
    assert json.loads(attributes[A.INPUT_MESSAGES]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Refund order 5"}]}
    ]
    (answer,) = json.loads(attributes[A.OUTPUT_MESSAGES])
    assert answer["finish_reason"] == "tool_use"
    assert answer["parts"] == [
        {"type": "tool_call", "id": "t1", "name": "refund", "arguments": {"order": 5}}
    ]


def test_a_traceloop_tool_span_becomes_a_tool_call():
    tool = span(
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "search",
            "traceloop.entity.input": '{"q": "hours"}',
            "traceloop.entity.output": '"9-5"',
        }
    )
    (call,) = Trace(trace_id="a" * 32, spans=[normalize_span(tool)]).tool_calls()
    assert (call.name, call.arguments, call.result) == ("search", {"q": "hours"}, "9-5")


def test_genai_values_already_present_are_never_changed():
    both = span(
        {
            A.OPERATION: "text_completion",
            A.REQUEST_MODEL: "kept",
            A.INPUT_TOKENS: 1,
            "openinference.span.kind": "LLM",
            "llm.model_name": "other",
            "llm.token_count.prompt": 99,
        }
    )
    attributes = normalize_span(both).attributes
    assert attributes[A.OPERATION] == "text_completion"
    assert attributes[A.REQUEST_MODEL] == "kept"
    assert attributes[A.INPUT_TOKENS] == 1
    # What was missing is still filled from the other convention.
    assert attributes[A.RESPONSE_MODEL] == "other"


def test_normalizing_twice_changes_nothing_and_a_genai_trace_comes_back_as_it_is():
    once = normalize_span(span(OI_LLM))
    assert normalize_span(once) is once
    genai = Trace(
        trace_id="a" * 32,
        spans=[span({A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: "m", A.INPUT_TOKENS: 3})],
    )
    assert normalize_trace(genai) is genai
    mixed = Trace(trace_id="a" * 32, spans=[span(OI_LLM)], resource={"service.name": "x"})
    assert normalize_trace(normalize_trace(mixed)) == normalize_trace(mixed)
    assert normalize_trace(mixed).resource == {"service.name": "x"}


def test_operations_are_inferred_only_from_what_the_span_says():
    assert normalize_span(span({"openinference.span.kind": "CHAIN"})).operation is None
    assert normalize_span(span({"openinference.span.kind": "AGENT"}, name="a")).operation == (
        A.OP_INVOKE_AGENT
    )
    assert normalize_span(span({"openinference.span.kind": "RETRIEVER"})).operation == "retrieval"
    assert normalize_span(span({A.REQUEST_MODEL: "gpt-4o"})).operation == A.OP_CHAT
    assert normalize_span(span({"http.method": "GET"})).operation is None
    # OpenLLMetry's task spans name a model they did not call: no chat is made up.
    task = span({"traceloop.span.kind": "task", A.REQUEST_MODEL: "gpt-4o"})
    assert normalize_span(task).operation is None


def test_openinference_prompts_without_messages_are_a_text_completion():
    completion = span(
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "davinci",
            "llm.prompts.0.prompt.text": "Say hi",
            "llm.choices.0.completion.text": "hi",
        }
    )
    attributes = normalize_span(completion).attributes
    assert attributes[A.OPERATION] == A.OP_TEXT_COMPLETION
    assert json.loads(attributes[A.OUTPUT_MESSAGES])[0]["parts"][0]["content"] == "hi"


def test_an_error_span_gets_its_error_type_from_the_exception_event():
    failed = span(
        {"openinference.span.kind": "TOOL", "tool.name": "pay"},
        status="error",
        events=[
            SpanEvent(name="exception", time_unix_nano=2, attributes={"exception.type": "Timeout"})
        ],
    )
    (call,) = Trace(trace_id="a" * 32, spans=[normalize_span(failed)]).tool_calls()
    assert (call.success, call.error_type) == (False, "Timeout")
    bare = span({"openinference.span.kind": "TOOL", "tool.name": "pay"}, status="error")
    assert normalize_span(bare).attributes[A.ERROR_TYPE] == "_OTHER"
    # An exception that was handled (status not error) is no failure.
    handled = span(
        {"openinference.span.kind": "TOOL", "tool.name": "pay"},
        events=[SpanEvent(name="exception", time_unix_nano=2, attributes={"exception.type": "X"})],
    )
    assert A.ERROR_TYPE not in normalize_span(handled).attributes


def test_only_a_span_without_a_name_is_given_one():
    assert normalize_span(span(OI_LLM, name="")).name == "chat gpt-4o"
    assert normalize_span(span(OI_LLM, name="my-llm")).name == "my-llm"


def sdk_spans_of_every_shape() -> list[Span]:
    """Spans the real OpenTelemetry SDK exports, read back as the receiver reads them: GenAI
    names complete or not, other conventions' names, errors, an agent span of each kind."""
    shapes: list[tuple[str, dict[str, object], bool]] = [
        ("chat qwen", {A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: "qwen"}, False),
        ("chat qwen", {A.OPERATION: A.OP_CHAT, "gen_ai.prompt.0.content": "hi"}, False),
        (
            "chat qwen",
            {A.OPERATION: A.OP_CHAT, "llm.input_messages.0.message.content": "hi"},
            False,
        ),
        ("chat qwen", {A.OPERATION: A.OP_CHAT, "llm.model_name": "qwen"}, False),
        ("chat qwen", {A.OPERATION: A.OP_CHAT}, True),
        ("", {A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: "qwen"}, False),
        ("x", {A.OPERATION: "", A.REQUEST_MODEL: "qwen"}, False),
        ("x", {A.REQUEST_MODEL: "qwen"}, False),
        ("x", {"openinference.span.kind": "LLM", "llm.model_name": "qwen"}, False),
        ("execute_tool t", {A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: "t"}, False),
        (
            "execute_tool t",
            {
                A.OPERATION: A.OP_EXECUTE_TOOL,
                A.TOOL_NAME: "t",
                A.TOOL_CALL_ID: "c",
                A.TOOL_ARGUMENTS: "{}",
                A.TOOL_RESULT: "{}",
            },
            False,
        ),
        ("a", {A.OPERATION: A.OP_INVOKE_AGENT, "openinference.span.kind": "AGENT"}, False),
        ("a", {A.OPERATION: A.OP_INVOKE_AGENT, "openinference.span.kind": "CHAIN"}, False),
        ("a", {A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: "support"}, True),
        ("r", {A.OPERATION: "retrieval", "session.id": "s-1"}, False),
        ("r", {A.OPERATION: "retrieval"}, False),
    ]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for name, attributes, failed in shapes:
        with tracer.start_as_current_span(name) as made:
            made.set_attributes(attributes)  # type: ignore[arg-type]
            if failed:
                made.set_status(Status(StatusCode.ERROR, "down"))
    provider.shutdown()
    body = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return [s for trace in traces_from_otlp_protobuf(body) for s in trace.spans]


def test_the_quick_test_for_spans_needing_nothing_agrees_with_the_general_path() -> None:
    spans = sdk_spans_of_every_shape()
    kept = 0
    for read in spans:
        quick, general = normalize_span(read), _normalized(read)
        assert quick.model_dump() == general.model_dump()
        assert (quick is read) == (general is read)
        kept += quick is read
    assert 0 < kept < len(spans)
