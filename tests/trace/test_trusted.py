"""trusted_model: a record built without validation is the record validation would build."""

from __future__ import annotations

from pydantic import BaseModel, Field

from seatrial.record import AssertionResult, AttemptRecord, Metrics
from seatrial.trace import Span, Trace, TraceRecorder, attrs, trusted_model


def test_a_trusted_record_equals_and_dumps_like_the_validated_one() -> None:
    fields = {
        "id": "tool_called",
        "level": "L1",
        "type": "tool_called",
        "verdict": "fail",
        "reason": "never called",
        "failure_type": "tool_not_called",
        "must_pass": True,
        "weight": 1.0,
        "score": None,
    }
    trusted = trusted_model(AssertionResult, dict(fields))
    validated = AssertionResult(**fields)
    assert trusted == validated
    assert trusted.model_dump_json() == validated.model_dump_json()
    assert trusted.model_fields_set == validated.model_fields_set


def test_missing_fields_get_their_defaults_and_fresh_containers_per_instance() -> None:
    first = trusted_model(
        AttemptRecord, {"run_id": "r", "case_id": "c", "attempt": 1, "verdict": "PASS"}
    )
    second = trusted_model(
        AttemptRecord, {"run_id": "r", "case_id": "c", "attempt": 2, "verdict": "PASS"}
    )
    assert first == AttemptRecord(run_id="r", case_id="c", attempt=1, verdict="PASS")
    assert first.model_fields_set == {"run_id", "case_id", "attempt", "verdict"}
    first.responses.append("hello")
    assert second.responses == []
    assert first.metrics is not second.metrics
    assert isinstance(first.metrics, Metrics)


def test_a_mutable_plain_default_is_not_shared_between_instances() -> None:
    class Holder(BaseModel):
        items: list[str] = ["a"]  # noqa: RUF012 (a plain mutable default, copied by pydantic)
        extra: dict[str, int] = Field(default_factory=dict)

    one, two = trusted_model(Holder, {}), trusted_model(Holder, {})
    one.items.append("b")
    assert two.items == ["a"]
    assert Holder.model_fields["items"].default == ["a"]


def test_a_trusted_trace_has_working_private_views() -> None:
    span = trusted_model(
        Span,
        {
            "trace_id": "t" * 32,
            "span_id": "s" * 16,
            "name": "execute_tool lookup",
            "start_time_unix_nano": 1,
            "attributes": {attrs.OPERATION: attrs.OP_EXECUTE_TOOL, attrs.TOOL_NAME: "lookup"},
        },
    )
    trace = trusted_model(Trace, {"trace_id": "t" * 32, "spans": [span]})
    assert [call.name for call in trace.tool_calls()] == ["lookup"]
    assert trace == Trace.model_validate(trace.model_dump())


def test_a_recorded_trace_dumps_like_the_same_trace_validated() -> None:
    # The recorder makes its spans and trace with every field given; what is stored of them
    # (their JSON) must be what validating the same values gives.
    recorder = TraceRecorder()
    with recorder.span("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}):
        with recorder.span("execute_tool t", {"gen_ai.tool.call.arguments": {"id": 1}}):
            recorder.event("seatrial.permission", {"decision": "granted"})
    trace = recorder.trace()
    validated = Trace.model_validate(trace.model_dump())
    assert trace == validated
    assert trace.model_dump_json() == validated.model_dump_json()
    for span, again in zip(trace.spans, validated.spans, strict=True):
        assert span.model_dump_json() == again.model_dump_json()
