"""The store's ingested production traces: masked spans grouped by trace, and their reads."""

from __future__ import annotations


class TracesMixin:
    """Store methods for ingested traces (``seatrial ingest``, the OTLP receiver)."""
