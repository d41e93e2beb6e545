"""The dataset center: production traces in (masked), cases out, golden sets, failures.

- ``import_tau_bench`` and ``import_tau2`` store a published tau-bench or tau2-bench results
  file as one finished run, so it can be reported, compared and gated like Seatrial's own runs.

Names are imported on first use, as :mod:`seatrial.judge` does: the dashboard imports the
parts it shows (ingestion, cases from traces, approval) without importing case generation,
which calls a model through the gateway.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seatrial.dataset._common import ImportResult
    from seatrial.dataset._tau2 import import_tau2
    from seatrial.dataset._tau_bench import import_tau_bench

_EXPORTS = {
    "ImportResult": "seatrial.dataset._common",
    "import_tau2": "seatrial.dataset._tau2",
    "import_tau_bench": "seatrial.dataset._tau_bench",
}

__all__ = ["ImportResult", "import_tau2", "import_tau_bench"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.dataset' has no attribute {name!r}")
