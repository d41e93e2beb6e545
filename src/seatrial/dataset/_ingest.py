"""Ingesting production traces: normalize, mask, store. The one path every ingested span takes.

The OTLP/HTTP receiver (``seatrial serve``, ``POST /v1/traces``) and ``seatrial ingest FILE``
both call :func:`ingest_traces`, so the rule "masked before it is written" holds for both:
the store is handed masked traces only, and a raw value lives no longer than the request or
the file being read.
"""

from __future__ import annotations

from collections.abc import Sequence

from seatrial.dataset._mask import Masker
from seatrial.store import IngestOutcome, Store
from seatrial.trace import Trace, normalize_trace


def ingest_traces(
    store: Store, traces: Sequence[Trace], *, source: str, masker: Masker
) -> IngestOutcome:
    """Store ``traces`` as production traces, in one transaction, after two steps:

    1. :func:`seatrial.trace.normalize_trace` maps OpenInference and older GenAI attributes
       onto the current GenAI names (unknown attributes are kept), so every check and page
       reads one vocabulary;
    2. ``masker`` replaces personal data with tokens, one per value within a trace.

    ``source`` says where the spans came from (``otlp``, or a file format's name). Spans
    whose trace id is an attempt's join that attempt's trace. Returns what was stored.
    """
    masked: list[Trace] = []
    counts: dict[str, dict[str, int]] = {}
    for trace in traces:
        result = masker.mask_trace(normalize_trace(trace))
        masked.append(result.trace)
        if result.counts:
            found = counts.setdefault(result.trace.trace_id, {})
            for kind, count in result.counts.items():
                found[kind] = found.get(kind, 0) + count
    return store.save_ingested(masked, source=source, masked=counts)
