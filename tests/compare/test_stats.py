"""The regression center's statistics agree with scipy, statsmodels and numpy."""

from __future__ import annotations

import itertools
import json
import random
from collections import defaultdict

import numpy
import pytest
from scipy.special import comb
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from seatrial.compare._stats import (
    Interval,
    Latency,
    Paired,
    latency_summary,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    newcombe_difference,
    paired_outcomes,
    pass_at_k,
    pass_hat_k,
    percentile,
    significant_drop,
    wilson_interval,
)
from tests.conftest import bundled_data

CONFIDENCES = [0.8, 0.9, 0.95, 0.99]
COUNTS = [(s, n) for n in (1, 2, 3, 5, 10, 37) for s in range(n + 1)] + [
    (0, 100),
    (1, 100),
    (50, 100),
    (99, 100),
    (100, 100),
    (72, 100),
    (3, 1000),
]


# --- Wilson ---------------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_wilson_interval_matches_statsmodels(confidence: float) -> None:
    for successes, n in COUNTS:
        low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
        got = wilson_interval(successes, n, confidence)
        assert got.estimate == pytest.approx(successes / n, abs=1e-15)
        assert got.low == pytest.approx(low, abs=1e-12), (successes, n)
        assert got.high == pytest.approx(high, abs=1e-12), (successes, n)
        assert got.confidence == confidence


def test_wilson_interval_never_collapses_at_all_or_nothing() -> None:
    none_pass = wilson_interval(0, 10)
    all_pass = wilson_interval(10, 10)
    assert none_pass.low == 0.0 and none_pass.high > 0.2
    assert all_pass.high == 1.0 and all_pass.low < 0.8


def test_wilson_interval_of_no_attempts_is_everything() -> None:
    assert wilson_interval(0, 0) == Interval(0.0, 0.0, 1.0, 0.95)


@pytest.mark.parametrize(
    ("successes", "n", "confidence", "named"),
    [(-1, 5, 0.95, "successes=-1"), (6, 5, 0.95, "successes=6"), (1, -1, 0.95, "n=-1"),
     (1, 5, 0.0, "0.0"), (1, 5, 1.0, "1.0"), (1, 5, 95, "95")],
)  # fmt: skip
def test_wilson_interval_rejects_bad_arguments_naming_them(
    successes: int, n: int, confidence: float, named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        wilson_interval(successes, n, confidence)


def test_interval_formats_as_percentages_and_dict() -> None:
    low, high = proportion_confint(72, 100, alpha=0.05, method="wilson")
    interval = wilson_interval(72, 100)
    assert interval.format() == f"72.0% [{low * 100:.1f}%, {high * 100:.1f}%]"
    assert interval.format(digits=0) == f"72% [{low * 100:.0f}%, {high * 100:.0f}%]"
    assert interval.format(percent=False, digits=3) == f"0.720 [{low:.3f}, {high:.3f}]"
    assert json.loads(json.dumps(interval.as_dict())) == {
        "estimate": 0.72,
        "low": pytest.approx(low),
        "high": pytest.approx(high),
        "confidence": 0.95,
    }


# --- pass@k and pass^k ----------------------------------------------------------------------


def _subsets(n: int, c: int, k: int) -> tuple[float, float]:
    """Brute force: over every k-subset of n repeats (c passes), the share with at least one
    pass and the share with only passes."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    any_pass = sum(any(s) for s in subsets) / len(subsets)
    all_pass = sum(all(s) for s in subsets) / len(subsets)
    return any_pass, all_pass


def test_pass_at_k_and_pass_hat_k_match_scipy_comb_and_subset_enumeration() -> None:
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                any_pass, all_pass = _subsets(n, c, k)
                at_k = 1 - comb(n - c, k, exact=True) / comb(n, k, exact=True)
                hat_k = comb(c, k, exact=True) / comb(n, k, exact=True)
                assert pass_at_k(n, c, k) == pytest.approx(at_k, abs=1e-12)
                assert pass_at_k(n, c, k) == pytest.approx(any_pass, abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(hat_k, abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(all_pass, abs=1e-12)


def test_pass_at_1_and_pass_hat_1_are_the_pass_rate() -> None:
    assert pass_at_k(4, 3, 1) == pass_hat_k(4, 3, 1) == 3 / 4


def test_pass_hat_k_falls_and_pass_at_k_rises_with_k() -> None:
    hats = [pass_hat_k(10, 7, k) for k in range(1, 11)]
    ats = [pass_at_k(10, 7, k) for k in range(1, 11)]
    assert hats == sorted(hats, reverse=True) and hats[-1] == 0.0
    assert ats == sorted(ats) and ats[-1] == 1.0


@pytest.mark.parametrize("estimator", [pass_at_k, pass_hat_k])
def test_k_larger_than_the_repeats_is_refused(estimator: object) -> None:
    with pytest.raises(ValueError, match="k must be at most the repeats"):
        estimator(3, 1, 4)  # type: ignore[operator]


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_means_over_cases_leave_out_cases_with_too_few_repeats() -> None:
    counts = [(4, 3), (4, 0), (2, 2), (5, 5)]
    kept = [(n, c) for n, c in counts if n >= 3]
    assert mean_pass_hat_k(counts, 3) == pytest.approx(
        sum(comb(c, 3, exact=True) / comb(n, 3, exact=True) for n, c in kept) / len(kept)
    )
    assert mean_pass_at_k(counts, 3) == pytest.approx(
        sum(1 - comb(n - c, 3, exact=True) / comb(n, 3, exact=True) for n, c in kept) / len(kept)
    )


@pytest.mark.parametrize("mean", [mean_pass_at_k, mean_pass_hat_k])
def test_means_over_cases_refuse_when_no_case_has_k_repeats(mean: object) -> None:
    with pytest.raises(ValueError, match="k=3"):
        mean([(2, 1), (1, 1)], 3)  # type: ignore[operator]
    with pytest.raises(ValueError):
        mean([], 1)  # type: ignore[operator]


def test_mean_pass_hat_k_reproduces_tau_bench_on_gpt_4o_airline() -> None:
    records = json.loads((bundled_data("tau-bench") / "gpt-4o-airline.json").read_text())
    # tau-bench's own computation (run.py display_metrics), done independently here
    successes: dict[int, int] = defaultdict(int)
    for record in records:
        successes[record["task_id"]] += abs(record["reward"] - 1) <= 1e-6
    trials = 4
    counts = [(trials, c) for c in successes.values()]
    assert len(records) == trials * len(successes)
    for k in range(1, trials + 1):
        expected = sum(comb(c, k) / comb(trials, k) for c in successes.values()) / len(successes)
        assert mean_pass_hat_k(counts, k) == pytest.approx(expected, abs=1e-12), k
    rewarded = sum(abs(r["reward"] - 1) <= 1e-6 for r in records)
    assert mean_pass_hat_k(counts, 1) == pytest.approx(rewarded / len(records))


# --- Newcombe difference and the max_regression rule ---------------------------------------

PAIRS = [
    (b, bn, c, cn)
    for bn, cn in [(1, 1), (3, 5), (10, 10), (20, 50), (100, 100)]
    for b in sorted({0, 1, bn // 2, bn - 1, bn} - {-1})
    for c in sorted({0, 1, cn // 3, cn - 1, cn} - {-1})
]


@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_newcombe_difference_matches_statsmodels(confidence: float) -> None:
    for base, base_n, cand, cand_n in PAIRS:
        low, high = confint_proportions_2indep(
            count1=cand, nobs1=cand_n, count2=base, nobs2=base_n,
            method="newcomb", compare="diff", alpha=1 - confidence,
        )  # fmt: skip
        got = newcombe_difference(base, base_n, cand, cand_n, confidence)
        assert got.estimate == pytest.approx(cand / cand_n - base / base_n, abs=1e-12)
        assert got.low == pytest.approx(low, abs=1e-12), (base, base_n, cand, cand_n)
        assert got.high == pytest.approx(high, abs=1e-12), (base, base_n, cand, cand_n)


def _upper(base: int, base_n: int, cand: int, cand_n: int, confidence: float) -> float:
    _, high = confint_proportions_2indep(
        count1=cand, nobs1=cand_n, count2=base, nobs2=base_n,
        method="newcomb", compare="diff", alpha=1 - confidence,
    )  # fmt: skip
    return float(high)


def test_significant_drop_flags_a_clearly_large_drop() -> None:
    assert _upper(90, 100, 50, 100, 0.95) < -0.05
    assert significant_drop(90, 100, 50, 100, points=5, confidence=0.95)


def test_significant_drop_ignores_a_small_dip_that_noise_explains() -> None:
    assert _upper(80, 100, 78, 100, 0.95) > 0
    assert not significant_drop(80, 100, 78, 100, points=5, confidence=0.95)
    assert not significant_drop(80, 100, 78, 100, points=0, confidence=0.95)


def test_significant_drop_switches_exactly_where_the_interval_leaves_the_threshold() -> None:
    base, n, points, confidence = 80, 100, 10, 0.9
    significant = [c for c in range(n + 1) if _upper(base, n, c, n, confidence) < -points / 100]
    border = max(significant)
    assert significant == list(range(border + 1))
    assert significant_drop(base, n, border, n, points=points, confidence=confidence)
    assert not significant_drop(base, n, border + 1, n, points=points, confidence=confidence)


def test_significant_drop_holds_only_for_points_below_the_interval_upper_bound() -> None:
    upper = _upper(40, 50, 25, 60, 0.95)  # a drop of about 38 points; upper near -0.20
    just_inside, just_outside = -upper * 100 - 1e-6, -upper * 100 + 1e-6
    assert significant_drop(40, 50, 25, 60, points=just_inside, confidence=0.95)
    assert not significant_drop(40, 50, 25, 60, points=just_outside, confidence=0.95)


def test_significant_drop_depends_on_the_confidence_asked() -> None:
    base, n, points = 80, 100, 5
    cand = next(c for c in range(n, -1, -1) if _upper(base, n, c, n, 0.8) < -points / 100)
    assert _upper(base, n, cand, n, 0.99) >= -points / 100
    assert significant_drop(base, n, cand, n, points=points, confidence=0.8)
    assert not significant_drop(base, n, cand, n, points=points, confidence=0.99)


def test_significant_drop_refuses_negative_points() -> None:
    with pytest.raises(ValueError, match="-1"):
        significant_drop(9, 10, 1, 10, points=-1, confidence=0.95)


# --- McNemar --------------------------------------------------------------------------------


def test_mcnemar_exact_matches_statsmodels_and_scipy_binomtest() -> None:
    discordant = [(b, c) for b in range(16) for c in range(16) if b + c] + [(40, 55), (3, 60)]
    for base_only, cand_only in discordant:
        table = [[7, base_only], [cand_only, 4]]
        reference = mcnemar(table, exact=True).pvalue
        n = base_only + cand_only
        binomial = binomtest(min(base_only, cand_only), n, 0.5).pvalue
        assert mcnemar_exact(base_only, cand_only) == pytest.approx(reference, rel=1e-9)
        assert mcnemar_exact(base_only, cand_only) == pytest.approx(binomial, rel=1e-9)


def test_mcnemar_exact_without_discordant_cases_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_exact_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="-2"):
        mcnemar_exact(-2, 3)


def test_paired_outcomes_count_only_cases_in_both_runs() -> None:
    base = {"a": True, "b": True, "c": False, "d": False, "e": True, "only-base": True}
    cand = {"a": True, "b": False, "c": True, "d": False, "e": False, "only-cand": False}
    paired = paired_outcomes(base, cand)
    assert paired == Paired(both_pass=1, base_only=2, cand_only=1, both_fail=1)
    table = [[paired.both_pass, paired.base_only], [paired.cand_only, paired.both_fail]]
    assert paired.p_value == pytest.approx(mcnemar(table, exact=True).pvalue)


def test_a_one_sided_shift_of_many_cases_is_significant() -> None:
    base = {f"case-{i}": True for i in range(30)}
    cand = {key: i >= 12 for i, key in enumerate(base)}  # 12 regressions, no fixes
    paired = paired_outcomes(base, cand)
    assert (paired.base_only, paired.cand_only) == (12, 0)
    assert paired.p_value == pytest.approx(binomtest(0, 12, 0.5).pvalue)
    assert paired.p_value < 0.001


# --- percentiles and latency ----------------------------------------------------------------


def _samples() -> list[list[float]]:
    rng = random.Random(5)
    return [[3.0], [1.0, 2.0], [5.0, 1.0, 4.0]] + [
        [rng.lognormvariate(0, 1) for _ in range(size)] for size in (7, 20, 101, 999)
    ]


def test_percentile_matches_numpy_linear() -> None:
    for values in _samples():
        for q in (0, 1, 10, 25, 33.3, 50, 90, 95, 99, 99.9, 100):
            expected = numpy.percentile(values, q, method="linear")
            assert percentile(values, q) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("values", "q"), [([], 50), ([1.0], -1), ([1.0], 101)])
def test_percentile_refuses_no_values_and_q_outside_0_to_100(values: list[float], q: float) -> None:
    with pytest.raises(ValueError):
        percentile(values, q)


def test_latency_summary_matches_numpy() -> None:
    for values in _samples():
        summary = latency_summary(values)
        assert summary == Latency(
            p50=pytest.approx(numpy.percentile(values, 50)),
            p90=pytest.approx(numpy.percentile(values, 90)),
            p95=pytest.approx(numpy.percentile(values, 95)),
            p99=pytest.approx(numpy.percentile(values, 99)),
            mean=pytest.approx(numpy.mean(values)),
            max=pytest.approx(numpy.max(values)),
        )


def test_latency_summary_of_nothing_is_none() -> None:
    assert latency_summary([]) is None
