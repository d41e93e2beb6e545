"""Ingesting production traces: normalize, mask, store. The one path every ingested span takes.

The OTLP/HTTP receiver (``seatrial serve``, ``POST /v1/traces``) and ``seatrial ingest FILE``
both go through :func:`mask_batch` and :func:`store_masked` (:func:`ingest_traces` is the two
in a row), so the rule "masked before it is written" holds for both: the store is handed a
:class:`MaskedBatch` only, and a raw value lives no longer than the request or the file being
read. The receiver runs the two steps apart so that one export is masked while the one
before it is written (web/_ingest.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from seatrial.dataset._mask import Masker
from seatrial.store import IngestOutcome, Store
from seatrial.trace import Trace, normalize_trace


@dataclass(frozen=True)
class MaskedBatch:
    """Traces normalized and masked by :func:`mask_batch`, ready to store."""

    traces: list[Trace]
    """The traces, every string masked."""
    masked: dict[str, dict[str, int]]
    """Trace id -> values masked in it per kind (traces with none are left out)."""


def mask_batch(traces: Sequence[Trace], *, masker: Masker) -> MaskedBatch:
    """``traces`` after two steps:

    1. :func:`seatrial.trace.normalize_trace` maps OpenInference and older GenAI attributes
       onto the current GenAI names (unknown attributes are kept), so every check and page
       reads one vocabulary;
    2. ``masker`` replaces personal data with tokens, one per value within a trace.
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
    return MaskedBatch(masked, counts)


def store_masked(store: Store, batch: MaskedBatch, *, source: str) -> IngestOutcome:
    """Store a masked batch as production traces, in one transaction.

    ``source`` says where the spans came from (``otlp``, or a file format's name). Spans
    whose trace id is an attempt's join that attempt's trace. Returns what was stored.
    """
    return store.save_ingested(batch.traces, source=source, masked=batch.masked)


def ingest_traces(
    store: Store, traces: Sequence[Trace], *, source: str, masker: Masker
) -> IngestOutcome:
    """Store ``traces`` as production traces, in one transaction, after normalizing and
    masking them (:func:`mask_batch`); see :func:`store_masked`."""
    return store_masked(store, mask_batch(traces, masker=masker), source=source)
