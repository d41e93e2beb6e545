"""The names of the trace formats :func:`~seatrial.trace.read_trace_file` recognises.

A module of their own, holding nothing else, so that ``seatrial ingest --help`` lists them
without loading the readers and pydantic (docs/performance.md, "Starting the command").
"""

from __future__ import annotations

TRACE_FORMATS: tuple[str, ...] = (
    "otlp-json",
    "openinference",
    "langfuse",
    "openai-chat",
    "swe-agent",
    "tools-called",
)
"""The formats :func:`~seatrial.trace.read_trace_file` recognises, in the order it tries them:
the most specific shapes first."""
