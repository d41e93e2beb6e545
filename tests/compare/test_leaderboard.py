"""A leaderboard's differences: McNemar on the cases both ran, Holm over the comparisons."""

from __future__ import annotations

import random

import pytest
from statsmodels.stats.multitest import multipletests

from seatrial.compare import (
    LeaderboardEntry,
    differences_from_best,
    holm_adjust,
    mcnemar_exact,
)
from seatrial.i18n import use_language


def test_holm_adjust_matches_statsmodels() -> None:
    rng = random.Random(15)
    samples = [[0.01], [0.04, 0.01], [0.03, 0.03, 0.5], [0.0, 1.0, 0.2, 0.049]] + [
        [rng.random() ** 3 for _ in range(size)] for size in (5, 9, 20)
    ]
    for p_values in samples:
        expected = multipletests(p_values, method="holm")[1]
        assert holm_adjust(p_values) == pytest.approx(list(expected), abs=1e-12)


def test_holm_adjust_of_nothing_is_nothing_and_refuses_a_p_above_one() -> None:
    assert holm_adjust([]) == []
    with pytest.raises(ValueError, match="1.5"):
        holm_adjust([0.2, 1.5])


def entry(agent: str, rank: int) -> LeaderboardEntry:
    return LeaderboardEntry(
        rank=rank,
        agent=agent,
        spec=f"model:{agent}",
        run_id=f"run-{agent}",
        started_at=0.0,
        cases=0,
        attempts=1,
        passes=0,
        success={"estimate": 0.0, "low": 0.0, "high": 1.0, "confidence": 0.95},
        k=1,
        pass_hat_k=None,
        latency_p50_ms=None,
        latency_p95_ms=None,
        mean_tokens=0.0,
        mean_cost_usd=0.0,
        tool_calls=0,
        tool_errors=0,
        tool_success=None,
    )


def cases(passing: int, failing: int, start: int = 0) -> dict[str, bool]:
    ids = [f"case-{i}" for i in range(start, start + passing + failing)]
    return {case: i < passing for i, case in enumerate(ids)}


def test_an_agent_failing_half_the_cases_is_named_as_significantly_worse() -> None:
    best, other = entry("strong", 1), entry("weak", 2)
    passed = {
        "run-strong": cases(16, 0),
        "run-weak": {f"case-{i}": i % 2 == 0 for i in range(16)},
    }
    [difference] = differences_from_best([best, other], passed)
    assert (difference.best_only, difference.other_only, difference.cases) == (8, 0, 16)
    assert difference.p_value == pytest.approx(mcnemar_exact(8, 0))
    assert difference.p_adjusted == difference.p_value  # one comparison: Holm changes nothing
    assert difference.significant
    assert difference.sentence == (
        "strong beats weak: 100% vs 50% of the 16 cases both ran, p = 0.008"
        " — significant: weak fails more often than strong"
    )
    assert "noise" not in difference.sentence


def test_agents_one_case_apart_are_not_called_different() -> None:
    best, other = entry("strong", 1), entry("near", 2)
    passed = {"run-strong": cases(16, 0), "run-near": cases(15, 1)}
    [difference] = differences_from_best([best, other], passed)
    assert not difference.significant
    assert difference.p_value == 1.0
    assert difference.sentence.endswith(
        "p = 1.000: not significant — too few cases to tell a difference from noise"
    )
    assert "beats" not in difference.sentence and "significant:" not in difference.sentence


def test_holm_keeps_a_borderline_difference_from_being_called_among_many() -> None:
    passed = {"run-best": cases(12, 0), "run-worse": cases(6, 6)}
    alone = differences_from_best([entry("best", 1), entry("worse", 2)], passed)
    assert alone[0].p_value == pytest.approx(0.03125)
    assert alone[0].significant

    # Two more agents, as good as the best: three comparisons, and 0.031 x 3 is not below 0.05.
    passed |= {"run-same": cases(12, 0), "run-twin": cases(12, 0)}
    board = [entry("best", 1), entry("same", 2), entry("twin", 3), entry("worse", 4)]
    many = differences_from_best(board, passed)
    worse = many[-1]
    assert worse.p_value == pytest.approx(0.03125)
    assert worse.p_adjusted == pytest.approx(3 * 0.03125)
    assert not worse.significant
    # The words follow the adjusted p: significant alone, noise among many.
    assert "significant: worse fails more often than best" in alone[0].sentence
    assert "too few cases to tell a difference from noise" in worse.sentence
    assert "significant:" not in worse.sentence


def test_only_the_cases_both_ran_are_paired() -> None:
    passed = {
        "run-strong": cases(10, 0) | {"only-strong": True},
        "run-weak": cases(2, 8) | {f"only-weak-{i}": True for i in range(30)},
    }
    [difference] = differences_from_best([entry("strong", 1), entry("weak", 2)], passed)
    assert difference.cases == 10
    assert (difference.best_rate, difference.other_rate) == (1.0, 0.2)


def test_the_agent_ahead_on_the_shared_cases_is_named_first() -> None:
    # Ranked first on attempts, but behind on the cases both ran: the sentence says so.
    passed = {"run-ranked": cases(2, 10), "run-better": cases(12, 0)}
    [difference] = differences_from_best([entry("ranked", 1), entry("better", 2)], passed)
    assert difference.significant
    assert difference.sentence.startswith("better beats ranked: 100% vs 17%")


def test_agents_without_a_case_in_common_are_not_compared() -> None:
    passed = {"run-a": cases(3, 0), "run-b": cases(3, 0, start=10)}
    [difference] = differences_from_best([entry("a", 1), entry("b", 2)], passed)
    assert difference.cases == 0
    assert not difference.significant
    assert "no case in common" in difference.sentence


def test_one_agent_has_nothing_to_be_compared_with() -> None:
    assert differences_from_best([entry("alone", 1)], {"run-alone": cases(3, 0)}) == []


def test_a_difference_reads_in_chinese_with_what_it_means() -> None:
    passed = {
        "run-strong": cases(16, 0),
        "run-weak": {f"case-{i}": i % 2 == 0 for i in range(16)},
        "run-near": cases(15, 1),
    }
    board = [entry("strong", 1), entry("near", 2), entry("weak", 3)]
    with use_language("zh_CN"):
        near, weak = differences_from_best(board, passed)
    assert weak.sentence.startswith("strong 胜过 weak：在双方都跑过的 16 个用例中")
    assert weak.sentence.endswith("（显著：weak 比 strong 更常失败）")
    assert near.sentence.endswith("不显著（样本太少，分不清是真差距还是噪声）")
    assert "显著：" not in near.sentence
