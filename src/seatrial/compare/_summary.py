"""A run's figures with their uncertainty: pass rate interval, pass@k and pass^k, latency."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from seatrial.compare._runs import RunData
from seatrial.compare._stats import (
    latency_summary,
    mean_pass_at_k,
    mean_pass_hat_k,
    wilson_interval,
)


class PassK(BaseModel):
    """pass@k and pass^k for one k, over the cases with at least k repeats."""

    k: int
    """How many repeats."""
    cases: int
    """Cases with at least k repeats (the mean is over them)."""
    pass_at_k: float
    """Chance that at least one of k repeats passes (unbiased estimator, mean over cases)."""
    pass_hat_k: float
    """Chance that all k repeats pass (tau-bench's pass^k, mean over cases)."""


class RunStatistics(BaseModel):
    """What a report shows beside the counts."""

    pass_rate: dict[str, float]
    """Attempt pass rate with its Wilson 95% interval: estimate, low, high, confidence."""
    case_pass_rate: dict[str, float]
    """Share of cases whose verdict is PASS, with its Wilson 95% interval."""
    pass_k: list[PassK] = Field(default_factory=list)
    """k = 1 .. the most repeats any case has (empty when every case ran once)."""
    latency_ms: dict[str, float] | None = None
    """Attempt wall time percentiles (p50, p90, p95, p99), mean and max; None for an
    imported run whose source recorded no times."""

    def pass_rate_text(self) -> str:
        """``"72.0% [61.3%, 80.6%]"``."""
        p = self.pass_rate
        return f"{p['estimate']:.1%} [{p['low']:.1%}, {p['high']:.1%}]"


def run_statistics(run: RunData) -> RunStatistics:
    """The statistics of a loaded run."""
    passes = sum(c.passes for c in run.cases)
    attempts = sum(c.n for c in run.cases)
    passed_cases = sum(c.passed for c in run.cases)
    most = max((c.n for c in run.cases), default=0)
    pass_k = []
    if most > 1:
        for k in range(1, most + 1):
            counts = [(c.n, c.passes) for c in run.cases if c.n >= k]
            pass_k.append(
                PassK(
                    k=k,
                    cases=len(counts),
                    pass_at_k=mean_pass_at_k(counts, k),
                    pass_hat_k=mean_pass_hat_k(counts, k),
                )
            )
    # Imported runs whose source kept no times carry made-up ones: no latency to speak of.
    timed = run.info.settings.times != "synthesised"
    latency = latency_summary([ms for c in run.cases for ms in c.wall_time_ms]) if timed else None
    latency_ms: dict[str, Any] | None = None
    if latency is not None:
        latency_ms = {name: round(value, 3) for name, value in vars(latency).items()}
    return RunStatistics(
        pass_rate=wilson_interval(passes, attempts).as_dict(),
        case_pass_rate=wilson_interval(passed_cases, len(run.cases)).as_dict(),
        pass_k=pass_k,
        latency_ms=latency_ms,
    )
