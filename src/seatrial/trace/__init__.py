"""The trace model: OTel GenAI spans, their recorder, OTLP import and export, and readers of
other tools' trace exports (``read_trace_file``), normalized onto GenAI names.

This package imports nothing else of Seatrial.
"""

from typing import TYPE_CHECKING, Any

from seatrial.trace import _attrs as attrs
from seatrial.trace._attrs import event_value
from seatrial.trace._conversation import (
    CONVERSATION_STEP_NS,
    Conversation,
    ConversationCall,
    ConversationMessage,
    build_conversation,
)
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._formats import TRACE_FORMATS, TraceFile, read_trace_file
from seatrial.trace._normalize import normalize_span, normalize_trace
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
    SpanLink,
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
from seatrial.trace._trusted import trusted_model

if TYPE_CHECKING:
    from seatrial.trace._otlp_proto import traces_from_otlp_protobuf


def __getattr__(name: str) -> Any:
    # The OTLP protobuf reader loads protobuf and OpenTelemetry's generated messages (about
    # 50 modules, 10-20 ms), which only the receiver needs: loaded when first asked for.
    if name == "traces_from_otlp_protobuf":
        from seatrial.trace._otlp_proto import traces_from_otlp_protobuf

        return traces_from_otlp_protobuf
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONVERSATION_STEP_NS",
    "TOOL_ERROR",
    "TRACE_FORMATS",
    "TRACE_FORMAT_VERSION",
    "Conversation",
    "ConversationCall",
    "ConversationMessage",
    "ModelCall",
    "OtlpFormatError",
    "Span",
    "SpanEvent",
    "SpanLink",
    "Trace",
    "TraceFile",
    "TraceFormatError",
    "TraceRecorder",
    "TraceToolCall",
    "add_usage",
    "attrs",
    "build_conversation",
    "decode_attribute",
    "encode_json",
    "event_value",
    "new_id",
    "normalize_span",
    "normalize_trace",
    "read_trace_file",
    "record_tools_called",
    "spans_from_otlp",
    "to_attribute",
    "trace_from_otlp",
    "trace_from_tools_called",
    "trace_to_otlp",
    "traces_from_otlp",
    "traces_from_otlp_protobuf",
    "trusted_model",
]
