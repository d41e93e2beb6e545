"""The trace model: OTel GenAI spans, their recorder, OTLP import and export, and readers of
other tools' trace exports (``read_trace_file``), normalized onto GenAI names.

This package imports nothing else of Seatrial. Its public names are imported when first used:
``import seatrial.trace`` loads only the format names and the reader's error, so that starting
``seatrial`` does not load pydantic (docs/performance.md, "Starting the command").
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._format_names import TRACE_FORMATS

_EXPORTS = {
    "CONVERSATION_STEP_NS": "seatrial.trace._conversation",
    "Conversation": "seatrial.trace._conversation",
    "ConversationCall": "seatrial.trace._conversation",
    "ConversationMessage": "seatrial.trace._conversation",
    "ModelCall": "seatrial.trace._span",
    "OtlpFormatError": "seatrial.trace._otlp",
    "Span": "seatrial.trace._span",
    "SpanEvent": "seatrial.trace._span",
    "SpanLink": "seatrial.trace._span",
    "TOOL_ERROR": "seatrial.trace._tools_called",
    "TRACE_FORMAT_VERSION": "seatrial.trace._span",
    "Trace": "seatrial.trace._span",
    "TraceFile": "seatrial.trace._formats",
    "TraceRecorder": "seatrial.trace._recorder",
    "TraceToolCall": "seatrial.trace._span",
    "add_usage": "seatrial.trace._tools_called",
    "build_conversation": "seatrial.trace._conversation",
    "decode_attribute": "seatrial.trace._span",
    "encode_json": "seatrial.trace._tools_called",
    "event_value": "seatrial.trace._attrs",
    "new_id": "seatrial.trace._recorder",
    "normalize_span": "seatrial.trace._normalize",
    "normalize_trace": "seatrial.trace._normalize",
    "read_trace_file": "seatrial.trace._formats",
    "record_tools_called": "seatrial.trace._tools_called",
    "spans_from_otlp": "seatrial.trace._otlp",
    "to_attribute": "seatrial.trace._recorder",
    "trace_from_otlp": "seatrial.trace._otlp",
    "trace_from_tools_called": "seatrial.trace._tools_called",
    "trace_to_otlp": "seatrial.trace._otlp",
    "traces_from_otlp": "seatrial.trace._otlp",
    "traces_from_otlp_protobuf": "seatrial.trace._otlp_proto",
    "trusted_model": "seatrial.trace._trusted",
}
"""Where each public name lives, imported when first asked for."""

if TYPE_CHECKING:
    from seatrial.trace import _attrs as attrs
    from seatrial.trace._attrs import event_value
    from seatrial.trace._conversation import (
        CONVERSATION_STEP_NS,
        Conversation,
        ConversationCall,
        ConversationMessage,
        build_conversation,
    )
    from seatrial.trace._formats import TraceFile, read_trace_file
    from seatrial.trace._normalize import normalize_span, normalize_trace
    from seatrial.trace._otlp import (
        OtlpFormatError,
        spans_from_otlp,
        trace_from_otlp,
        trace_to_otlp,
        traces_from_otlp,
    )
    from seatrial.trace._otlp_proto import traces_from_otlp_protobuf
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


def __getattr__(name: str) -> Any:
    # The spans' pydantic models, the readers and OTLP cost starting `seatrial` 0.1-0.2 s of
    # CPU, yet only commands that read traces use them; the OTLP protobuf reader (protobuf and
    # OpenTelemetry's generated messages) only the receiver does.
    if name == "attrs":
        value: Any = import_module("seatrial.trace._attrs")
    elif name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


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
