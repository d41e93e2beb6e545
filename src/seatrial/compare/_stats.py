"""The statistics of the regression center: intervals, pass@k / pass^k, paired tests, latency.

Standard library only (``math``, ``statistics.NormalDist``); the tests check every figure
against scipy and statsmodels. Rates are fractions in [0, 1]; differences are candidate minus
base, so a negative difference is a drop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

_PerCase = Callable[[int, int, int], float]


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval ``[low, high]``."""

    estimate: float
    low: float
    high: float
    confidence: float = 0.95

    def format(self, percent: bool = True, digits: int = 1) -> str:
        """``"72.0% [61.3%, 80.6%]"``; ``percent=False`` gives fractions (``digits`` places)."""
        if percent:
            return (
                f"{self.estimate * 100:.{digits}f}% "
                f"[{self.low * 100:.{digits}f}%, {self.high * 100:.{digits}f}%]"
            )
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def as_dict(self) -> dict[str, float]:
        """The interval as a JSON-ready dict: estimate, low, high, confidence."""
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
        }


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 exclusive (got {confidence})")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def _check_count(successes: int, n: int, what: str = "successes") -> None:
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"{what} must be between 0 and n (got {what}={successes}, n={n})")


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The pass rate ``successes / n`` with its Wilson score interval (Wilson 1927).

    Unlike the textbook ``p ± z·sqrt(p(1-p)/n)`` it stays inside [0, 1] and does not collapse
    to a zero-width interval at 0 or n passes. Read it as: the true rate lies in
    ``[low, high]`` with the given confidence. With no attempts (``n == 0``) nothing is known:
    estimate 0, interval [0, 1].
    """
    z = _z(confidence)
    _check_count(successes, n)
    if n == 0:
        return Interval(0.0, 0.0, 1.0, confidence)
    p = successes / n
    z2 = z * z
    center = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at 0 and n passes the bound is exactly 0 or 1; the formula leaves float noise there
    low = 0.0 if successes == 0 else center - half
    high = 1.0 if successes == n else center + half
    return Interval(p, low, high, confidence)


def _check_k(n: int, c: int, k: int) -> None:
    _check_count(c, n, "c")
    if k < 1:
        raise ValueError(f"k must be at least 1 (got k={k})")
    if k > n:
        raise ValueError(f"k must be at most the repeats n (got k={k}, n={n})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k: the chance that at least one of k attempts passes, from c passes in n repeats.

    Unbiased estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021, "Evaluating Large
    Language Models Trained on Code"): the probability that a random k-subset of the n
    repeats holds at least one pass. It rises with k; it answers "can the agent do it?".
    """
    _check_k(n, c, k)
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k attempts all pass, from c passes in n repeats.

    Unbiased estimator ``C(c, k) / C(n, k)`` (tau-bench, Yao et al. 2024): the probability that
    a random k-subset of the n repeats holds only passes. It falls with k; it answers "does
    the agent do it every time?".
    """
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _mean_over_cases(counts: Iterable[tuple[int, int]], k: int, per_case: _PerCase) -> float:
    values = [per_case(n, c, k) for n, c in counts if n >= k]
    if not values:
        raise ValueError(f"no case has at least k={k} repeats; lower k or run more repeats")
    return math.fsum(values) / len(values)


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """The mean of :func:`pass_at_k` over cases, each given as ``(n, c)``.

    Cases with fewer than k repeats are left out; ValueError if none remain.
    """
    return _mean_over_cases(counts, k, pass_at_k)


def mean_pass_hat_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """The mean of :func:`pass_hat_k` over cases, each given as ``(n, c)``, as tau-bench does.

    Cases with fewer than k repeats are left out; ValueError if none remain.
    """
    return _mean_over_cases(counts, k, pass_hat_k)


def newcombe_difference(
    base_successes: int,
    base_n: int,
    cand_successes: int,
    cand_n: int,
    confidence: float = 0.95,
) -> Interval:
    """The change in pass rate, candidate minus base, with Newcombe's hybrid score interval.

    Method 10 of Newcombe (1998), "Interval estimation for the difference between independent
    proportions": built from the two Wilson intervals ``(l1, u1)`` (base, rate p1) and
    ``(l2, u2)`` (candidate, rate p2) as ``d - sqrt((p2-l2)² + (u1-p1)²)`` to
    ``d + sqrt((u2-p2)² + (p1-l1)²)`` with ``d = p2 - p1``. An interval wholly below 0 is a
    drop at that confidence; one that crosses 0 does not tell a change from noise.
    """
    base = wilson_interval(base_successes, base_n, confidence)
    cand = wilson_interval(cand_successes, cand_n, confidence)
    d = cand.estimate - base.estimate
    low = d - math.hypot(cand.estimate - cand.low, base.high - base.estimate)
    high = d + math.hypot(cand.high - cand.estimate, base.estimate - base.low)
    return Interval(d, low, high, confidence)


def significant_drop(
    base_successes: int,
    base_n: int,
    cand_successes: int,
    cand_n: int,
    points: float,
    confidence: float,
) -> bool:
    """Whether the pass rate fell by more than ``points`` percentage points, at ``confidence``.

    True when the whole :func:`newcombe_difference` interval lies below ``-points / 100``.
    This is the rule ``max_regression`` gates use: a gate fails only on a drop the data
    supports, not on a dip that noise explains.
    """
    if points < 0:
        raise ValueError(f"points must be 0 or more (got {points})")
    diff = newcombe_difference(base_successes, base_n, cand_successes, cand_n, confidence)
    return diff.high < -points / 100


def mcnemar_exact(base_only: int, cand_only: int) -> float:
    """Two-sided exact McNemar p-value for paired pass/fail outcomes (McNemar 1947).

    Only the discordant cases count: b passing in base only, c in the candidate only. Under
    "no change" each is equally likely, so ``min(b, c)`` is Binomial(b + c, 1/2) and
    ``p = min(1, 2·P(X <= min(b, c)))``. A small p (say below 0.05) says the cases that changed
    moved one way more than chance explains; b + c == 0 gives 1.0.
    """
    if base_only < 0 or cand_only < 0:
        raise ValueError(f"counts must be 0 or more (got {base_only}, {cand_only})")
    n = base_only + cand_only
    tail = sum(math.comb(n, i) for i in range(min(base_only, cand_only) + 1))
    return min(1.0, 2 * tail / (1 << n))


@dataclass(frozen=True)
class Paired:
    """Paired outcomes of the cases present in both runs."""

    both_pass: int
    base_only: int
    cand_only: int
    both_fail: int

    @property
    def p_value(self) -> float:
        """The exact McNemar p-value of :func:`mcnemar_exact` on the discordant cases."""
        return mcnemar_exact(self.base_only, self.cand_only)


def paired_outcomes(base: Mapping[str, bool], cand: Mapping[str, bool]) -> Paired:
    """Count the cases (keys present in both) by pass in base, pass in candidate."""
    shared = [key for key in base if key in cand]
    return Paired(
        both_pass=sum(base[k] and cand[k] for k in shared),
        base_only=sum(base[k] and not cand[k] for k in shared),
        cand_only=sum(cand[k] and not base[k] for k in shared),
        both_fail=sum(not base[k] and not cand[k] for k in shared),
    )


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of p-values for multiple comparisons (Holm 1979).

    With m p-values sorted ascending, the i-th (from 0) becomes ``(m - i)·p``, kept no
    smaller than the one before it and capped at 1; the result is in the order given. Reject
    where the adjusted value is below alpha: the chance of any false "significant" among the
    m comparisons then stays below alpha, with more power than Bonferroni.
    """
    for p in p_values:
        if not 0 <= p <= 1:
            raise ValueError(f"p-values must be between 0 and 1 (got {p})")
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (q in 0..100), linear between closest ranks (numpy's default).

    With the values sorted as ``v[0..n-1]``, it is ``v[i] + f·(v[i+1] - v[i])`` where
    ``i + f = (n - 1)·q / 100``.
    """
    if not values:
        raise ValueError("percentile of no values; there is nothing to summarise")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be between 0 and 100 (got {q})")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


@dataclass(frozen=True)
class Latency:
    """Latency percentiles, mean and maximum, in the unit of the values given."""

    p50: float
    p90: float
    p95: float
    p99: float
    mean: float
    max: float


def latency_summary(values: Sequence[float]) -> Latency | None:
    """Summarise latencies (p50, p90, p95, p99, mean, max); None when there are none."""
    if not values:
        return None
    return Latency(
        p50=percentile(values, 50),
        p90=percentile(values, 90),
        p95=percentile(values, 95),
        p99=percentile(values, 99),
        mean=math.fsum(values) / len(values),
        max=float(max(values)),
    )
