"""Datasets: turning others' benchmark runs into stored Seatrial runs.

``import_tau_bench`` and ``import_tau2`` read a published tau-bench or tau2-bench results file
and store it as one finished run (cases from the tasks, attempts from the trials, traces from
the conversations), so it can be reported, compared and gated like Seatrial's own runs.
"""

from seatrial.dataset._common import ImportResult
from seatrial.dataset._tau2 import import_tau2
from seatrial.dataset._tau_bench import import_tau_bench

__all__ = ["ImportResult", "import_tau2", "import_tau_bench"]
