"""The trace model: OTel GenAI spans, their recorder, and OTLP/JSON import and export.

This package imports nothing else of Seatrial.
"""

from seatrial.trace import _attrs as attrs
from seatrial.trace._recorder import TraceRecorder, new_id, to_attribute
from seatrial.trace._span import (
    TRACE_FORMAT_VERSION,
    ModelCall,
    Span,
    SpanEvent,
    ToolCall,
    Trace,
)

__all__ = [
    "TRACE_FORMAT_VERSION",
    "ModelCall",
    "Span",
    "SpanEvent",
    "ToolCall",
    "Trace",
    "TraceRecorder",
    "attrs",
    "new_id",
    "to_attribute",
]
