"""Reading a trace file of any known format: detection, JSONL, gzip, located errors."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from seatrial.trace import (
    TRACE_FORMATS,
    Span,
    Trace,
    TraceFile,
    TraceFormatError,
    read_trace_file,
    trace_to_otlp,
)
from seatrial.trace import attrs as A
from tests.conftest import bundled_data

SECRET = "13800138000"
"""A phone number planted in bad files: no error message may repeat it."""


def write(path: Path, data: Any, *, lines: bool = False) -> Path:
    if lines:
        path.write_text("\n".join(json.dumps(d) for d in data) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps(data), encoding="utf-8")
    return path


def otlp_trace(trace_id: str, span_id: str, attributes: dict[str, Any]) -> Trace:
    span = Span(
        trace_id=trace_id,
        span_id=span_id,
        name="",
        start_time_unix_nano=1_700_000_000_000_000_000,
        end_time_unix_nano=1_700_000_000_100_000_000,
        attributes=attributes,
    )
    return Trace(trace_id=trace_id, spans=[span])


EXAMPLES: dict[str, Any] = {
    "otlp-json": trace_to_otlp(otlp_trace("1" * 32, "2" * 16, {A.OPERATION: A.OP_CHAT})),
    "openai-chat": {
        "messages": [
            {"role": "user", "content": "Where is order 7?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": '{"id": "7"}'},
                    }
                ],
            },
        ]
    },
    "swe-agent": {
        "trajectory": [{"action": "ls", "observation": "a.py", "response": "Look first."}],
        "info": {"exit_status": "submitted"},
    },
    "tools-called": {
        "session_id": "s1",
        "response": "done",
        "tools_called": [{"name": "f", "input": {}, "output": {}, "latency_ms": 3}],
    },
}
FILES = {
    "openinference": "openinference/phoenix-rest-spans.json",
    "langfuse": "langfuse/trace-v3-agent.json",
}


def test_the_known_formats_are_tried_most_specific_first():
    assert TRACE_FORMATS == (
        "otlp-json",
        "openinference",
        "langfuse",
        "openai-chat",
        "swe-agent",
        "tools-called",
    )


def test_every_reader_is_tried_none_left_out_of_the_format_names():
    # The names live apart from the readers (so `seatrial ingest --help` lists them without
    # loading the readers): a reader whose name is not among them would never be tried.
    from seatrial.trace import _formats

    assert sorted(_formats._BY_FORMAT) == sorted(TRACE_FORMATS)
    assert [reader.FORMAT for reader in _formats._READERS] == list(TRACE_FORMATS)


@pytest.mark.parametrize("name", TRACE_FORMATS)
def test_every_format_is_recognised_and_read(tmp_path: Path, name: str):
    if name in FILES:
        path = tmp_path / "export.json"
        shutil.copy(bundled_data(FILES[name]), path)
    else:
        path = write(tmp_path / "export.json", EXAMPLES[name])
    result = read_trace_file(path)
    assert isinstance(result, TraceFile)
    assert (result.path, result.format) == (path, name)
    assert result.traces and all(trace.spans for trace in result.traces)


def test_otlp_jsonl_from_a_collector_file_exporter_joins_spans_by_trace_id(tmp_path: Path):
    first = trace_to_otlp(otlp_trace("1" * 32, "2" * 16, {}), service_name="checkout")
    second = trace_to_otlp(otlp_trace("1" * 32, "3" * 16, {}), service_name="payments")
    other = trace_to_otlp(otlp_trace("4" * 32, "5" * 16, {}))
    result = read_trace_file(write(tmp_path / "traces.jsonl", [first, second, other], lines=True))
    assert result.format == "otlp-json"
    assert [(t.trace_id, len(t.spans)) for t in result.traces] == [("1" * 32, 2), ("4" * 32, 1)]
    # The service that started the trace names it.
    assert result.traces[0].resource == {"service.name": "checkout"}


def test_openinference_attributes_in_an_otlp_file_are_normalized(tmp_path: Path):
    oi = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"}
    oi |= {"llm.token_count.prompt": 10, "llm.token_count.completion": 2}
    path = write(tmp_path / "oi.json", trace_to_otlp(otlp_trace("1" * 32, "2" * 16, oi)))
    (trace,) = read_trace_file(path).traces
    (call,) = trace.model_calls()
    assert (call.model, call.input_tokens, call.output_tokens) == ("gpt-4o", 10, 2)
    assert trace.spans[0].name == "chat gpt-4o"


def test_a_gzip_compressed_file_is_read(tmp_path: Path):
    path = tmp_path / "export.json.gz"
    path.write_bytes(gzip.compress(bundled_data(FILES["langfuse"]).read_bytes()))
    assert read_trace_file(path).format == "langfuse"


def test_a_bad_jsonl_line_is_named_without_its_content(tmp_path: Path):
    path = tmp_path / "spans.jsonl"
    good = json.dumps(EXAMPLES["tools-called"])
    path.write_text(f'{good}\n\n{good}\n{{"phone": {SECRET}x}}\n', encoding="utf-8")
    with pytest.raises(TraceFormatError) as info:
        read_trace_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: line 4 is not valid JSON")
    assert SECRET not in message


def test_a_bad_json_document_names_the_line_without_its_content(tmp_path: Path):
    path = tmp_path / "export.json"
    path.write_text('{\n  "resourceSpans": [\n    {"phone": ' + SECRET + "x}\n  ]\n}", "utf-8")
    with pytest.raises(TraceFormatError, match=rf"^{path}:3: not valid JSON") as info:
        read_trace_file(path)
    assert SECRET not in str(info.value)


def test_a_record_its_reader_refuses_is_named_by_line_and_field(tmp_path: Path):
    record = {
        "context.trace_id": "a" * 32,
        "context.span_id": "b" * 16,
        "start_time": 1_741_076_400_000,
    }
    broken = {**record, "context.span_id": "c" * 16, "start_time": f"call {SECRET}"}
    path = write(tmp_path / "spans.jsonl", [record, record, broken], lines=True)
    with pytest.raises(TraceFormatError) as info:
        read_trace_file(path)
    message = str(info.value)
    assert message == (
        f"{path}:3: not a valid openinference file: start_time: expected an ISO 8601 time "
        "or epoch milliseconds"
    )


def test_an_otlp_error_names_the_place_but_not_the_value(tmp_path: Path):
    export = trace_to_otlp(otlp_trace("1" * 32, "2" * 16, {}))
    export["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = SECRET
    with pytest.raises(TraceFormatError) as info:
        read_trace_file(write(tmp_path / "export.json", export))
    message = str(info.value)
    assert "resourceSpans[0].scopeSpans[0].spans[0].traceId" in message
    assert SECRET not in message


def test_an_unknown_file_lists_every_format_and_what_it_looks_like(tmp_path: Path):
    path = write(tmp_path / "notes.json", {"phone": SECRET, "note": "call back"})
    with pytest.raises(TraceFormatError) as info:
        read_trace_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not a trace export Seatrial knows")
    for name in TRACE_FORMATS:
        assert f"  - {name}: " in message
    assert "`resourceSpans`" in message
    assert SECRET not in message


def test_an_empty_or_missing_file_says_so(tmp_path: Path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(TraceFormatError, match="the file is empty"):
        read_trace_file(empty)
    with pytest.raises(TraceFormatError, match="cannot be read"):
        read_trace_file(tmp_path / "missing.json")
