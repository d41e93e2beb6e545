"""``seatrial ingest``: read exported trace files into the store, masked."""

from __future__ import annotations
