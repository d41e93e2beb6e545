"""Trace files and OTLP bodies at volume: a reader returns traces or says what is wrong.

``read_trace_file`` raises only :class:`TraceFormatError` naming the file, and
``traces_from_otlp_protobuf`` / ``traces_from_otlp`` only :class:`OtlpFormatError`, whatever
the input: random JSON, random bytes, or a real export with one part replaced. Every trace a
reader returns is one the store can take (spans of its own trace id, ends after starts).
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from seatrial.trace import (
    OtlpFormatError,
    Trace,
    TraceFormatError,
    _recorder,
    encode_json,
    read_trace_file,
    trace_to_otlp,
    traces_from_otlp,
    traces_from_otlp_protobuf,
)
from seatrial.trace._recorder import ATTRIBUTE_JSON
from tests.properties._strategies import (
    SEEDS,
    json_values,
    mutated_exports,
    recorded_trace,
    scalars,
)


def test_every_seed_is_read_as_its_format(tmp_path):
    for name, data in SEEDS.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")

        assert read_trace_file(path).format == name


def read_or_refuse(path: Path) -> None:
    """Read the file; a refusal must be a TraceFormatError naming the file."""
    try:
        read = read_trace_file(path)
    except TraceFormatError as error:
        assert str(error).startswith(str(path)), error
        return
    for trace in read.traces:
        assert_storable(trace)


def assert_storable(trace: Trace) -> None:
    for span in trace.spans:
        assert span.trace_id == trace.trace_id
        assert span.span_id
        assert span.end_time_unix_nano is None or isinstance(span.end_time_unix_nano, int)


@given(export=mutated_exports(), as_jsonl=st.booleans())
def test_a_mutated_export_is_read_or_refused_with_the_file_named(tmp_path, export, as_jsonl):
    _, data = export
    path = tmp_path / ("export.jsonl" if as_jsonl else "export.json")
    if as_jsonl and isinstance(data, list):
        text = "\n".join(json.dumps(record) for record in data)
    else:
        text = json.dumps(data)
    path.write_text(text, encoding="utf-8")

    read_or_refuse(path)


@given(data=json_values)
def test_any_json_document_is_read_or_refused_with_the_file_named(tmp_path, data):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    read_or_refuse(path)


@given(raw=st.binary(max_size=300), zipped=st.booleans())
def test_any_bytes_are_read_or_refused_with_the_file_named(tmp_path, raw, zipped):
    path = tmp_path / "export.json"
    path.write_bytes(gzip.compress(raw) if zipped else raw)

    read_or_refuse(path)


@given(export=mutated_exports())
def test_an_otlp_json_body_gives_traces_or_an_otlp_format_error(export):
    _, data = export
    try:
        traces = traces_from_otlp(data)
    except OtlpFormatError:
        return
    for trace in traces:
        assert_storable(trace)


def protobuf_seed() -> bytes:
    """The recorded trace as an OTLP exporter would POST it."""
    export = trace_to_otlp(recorded_trace())
    # OTLP/JSON writes ids in hex; protobuf's JSON mapping reads bytes as base64.
    for resource in export["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return ParseDict(export, ExportTraceServiceRequest()).SerializeToString()


@settings(max_examples=100)
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=10_000), st.binary(max_size=3)), max_size=4
    ),
    cut=st.integers(min_value=0, max_value=10_000),
)
def test_a_damaged_protobuf_body_gives_traces_or_an_otlp_format_error(edits, cut):
    body = protobuf_seed()
    for at, new in edits:
        at %= len(body)
        body = body[:at] + new + body[at + len(new) :]
    body = body[: max(cut, 1) if cut < len(body) else len(body)]
    try:
        traces = traces_from_otlp_protobuf(body)
    except OtlpFormatError:
        return
    for trace in traces:
        assert_storable(trace)


def test_the_protobuf_seed_reads_as_the_recorded_trace():

    [trace] = traces_from_otlp_protobuf(protobuf_seed())

    assert [s.name for s in trace.spans] == [s.name for s in recorded_trace().spans]


def test_a_jsonl_export_may_hold_unicode_line_separators_inside_its_strings(tmp_path):
    # str.splitlines() cut a record at U+2028, which JSON strings may hold unescaped.
    record = copy.deepcopy(SEEDS["tools-called"])
    record["response"] = "first\u2028second"
    path = tmp_path / "responses.jsonl"
    second = {**record, "session_id": "s2"}
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [record, second]))

    read = read_trace_file(path)

    assert read.format == "tools-called" and len(read.traces) == 2


@pytest.mark.parametrize("value", ["9" * 5_000, "[" * 5_000 + "]" * 5_000])
@pytest.mark.parametrize("jsonl", [False, True])
def test_a_value_python_cannot_read_is_refused_with_the_file_named(tmp_path, value, jsonl):
    # A 5,000-digit number (ValueError) or 5,000 levels of lists (RecursionError) escaped
    # read_trace_file as a crash.
    record = json.dumps(SEEDS["tools-called"]).replace('"latency_ms": 12', f'"latency_ms": {value}')
    text = f"{json.dumps(SEEDS['tools-called'])}\n{record}" if jsonl else record
    path = tmp_path / "responses.jsonl"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(TraceFormatError) as refused:
        read_trace_file(path)

    assert str(refused.value).startswith(f"{path}:2:" if jsonl else f"{path}:")


@given(json_values)
def test_tool_json_is_what_the_attribute_encoder_writes(value: Any) -> None:
    # encode_json reuses one C encoder built once; every value must read as the encoder writes it.
    assert encode_json(value) == ATTRIBUTE_JSON.encode(value)


@given(st.dictionaries(st.text(max_size=10), scalars, max_size=6))
def test_flat_tool_arguments_are_what_the_attribute_encoder_writes(value: dict[str, Any]) -> None:
    assert encode_json(value) == ATTRIBUTE_JSON.encode(value)


def test_without_a_c_encoder_tool_json_is_still_the_attribute_encoder_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An interpreter without json's C encoder (not CPython) takes the encoder's own path.
    monkeypatch.setattr(_recorder, "_ATTRIBUTE_JSON_FAST", None)
    value = {"城市": "上海", "n": [1, 2.5, None, float("nan")], "ok": True}
    assert encode_json(value) == ATTRIBUTE_JSON.encode(value)


def test_a_circular_tool_value_is_refused_as_the_encoder_refuses_it() -> None:
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        encode_json({"items": circular})
