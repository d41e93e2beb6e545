"""Distances between two samples' distributions, for drift: total variation and KS.

Plain Python; the tests check them against scipy.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def total_variation(base: Iterable[Hashable], run: Iterable[Hashable]) -> float:
    """Total variation distance of two samples' empirical distributions (0 same, 1 disjoint)."""
    p, q = shares(base), shares(run)
    return 0.5 * math.fsum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in p.keys() | q.keys())


def ks_statistic(base: Sequence[float], run: Sequence[float]) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two
    empirical distribution functions (what ``scipy.stats.ks_2samp`` calls ``statistic``)."""
    return ks_gap(sorted(base), sorted(run))[0]


def ks_gap(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """The KS statistic of two sorted samples, and the value where the gap is largest."""
    if not a or not b:
        raise ValueError("the KS statistic needs at least one value on each side")
    best, where = 0.0, a[0] if a else 0.0
    for value in sorted(set(a) | set(b)):
        gap = abs(ecdf(a, value) - ecdf(b, value))
        if gap > best:
            best, where = gap, value
    return best, where


def ecdf(ordered: Sequence[float], value: float) -> float:
    """The share of the sorted sample at or below ``value``."""
    return bisect_right(ordered, value) / len(ordered)


def shares(values: Iterable[K]) -> dict[K, float]:
    """Each value's share of the sample."""
    counts = Counter(values)
    total = sum(counts.values())
    if not total:
        raise ValueError("a distribution needs at least one value")
    return {key: count / total for key, count in counts.items()}
