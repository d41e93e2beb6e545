"""The run defaults: what a run does when nothing says otherwise.

They are re-exported by :mod:`seatrial.record` (``seatrial.record.DEFAULT_CONCURRENCY``), where
the run settings that use them live. A module of their own, holding nothing else, so that
``seatrial worker --help`` shows its default without loading pydantic (docs/performance.md,
"Starting the command").
"""

from __future__ import annotations

DEFAULT_CONCURRENCY = 8
"""Attempts in flight at once when nothing says otherwise (``run.concurrency``)."""
DEFAULT_TIMEOUT_S = 60.0
"""Seconds one attempt may take when nothing says otherwise (``run.timeout_s``)."""
DEFAULT_WORKERS = 1
