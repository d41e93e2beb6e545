"""The trace model: OTel GenAI spans, their recorder, and OTLP/JSON import and export.

This package imports nothing else of Seatrial.
"""

from seatrial.trace import _attrs as attrs
from seatrial.trace._attrs import event_value
from seatrial.trace._otlp import (
    OtlpFormatError,
    spans_from_otlp,
    trace_from_otlp,
    trace_to_otlp,
    traces_from_otlp,
)
from seatrial.trace._recorder import TraceRecorder, new_id, to_attribute
from seatrial.trace._span import (
    TRACE_FORMAT_VERSION,
    ModelCall,
    Span,
    SpanEvent,
    Trace,
    TraceToolCall,
    decode_attribute,
)
from seatrial.trace._tools_called import (
    TOOL_ERROR,
    add_usage,
    encode_json,
    record_tools_called,
    trace_from_tools_called,
)

__all__ = [
    "TOOL_ERROR",
    "TRACE_FORMAT_VERSION",
    "ModelCall",
    "OtlpFormatError",
    "Span",
    "SpanEvent",
    "Trace",
    "TraceRecorder",
    "TraceToolCall",
    "add_usage",
    "attrs",
    "decode_attribute",
    "encode_json",
    "event_value",
    "new_id",
    "record_tools_called",
    "spans_from_otlp",
    "to_attribute",
    "trace_from_otlp",
    "trace_from_tools_called",
    "trace_to_otlp",
    "traces_from_otlp",
]
