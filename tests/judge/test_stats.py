"""Agreement statistics, checked against scikit-learn and against their definitions."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from seatrial.errors import InputError
from seatrial.judge import agreement_report, bootstrap_kappa_interval, cohen_kappa


def _pattern(repeats: int) -> tuple[list[str], list[str]]:
    # 10 items, 8 agreements: the same kappa at every size, so only the sample size changes.
    human = ["pass"] * 5 + ["fail"] * 5
    judge = ["pass"] * 4 + ["fail"] + ["fail"] * 4 + ["pass"]
    return human * repeats, judge * repeats


def test_kappa_matches_scikit_learn_on_mixed_labels():
    human = ["pass", "fail", "pass", "pass", "fail", "fail", "pass", "fail", "pass", "pass"]
    judge = ["pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail", "pass", "fail"]
    assert cohen_kappa(human, judge) == pytest.approx(cohen_kappa_score(human, judge))


def test_kappa_is_one_for_perfect_agreement():
    human, _ = _pattern(3)
    assert cohen_kappa(human, human) == pytest.approx(1.0)
    report = agreement_report(human, human, positive_label="pass", resamples=200)
    assert report.agreement == 1.0
    assert report.kappa_interval is not None
    assert report.kappa_interval.low == pytest.approx(1.0)


def test_kappa_is_undefined_when_everyone_uses_one_label():
    labels = ["pass"] * 20
    assert cohen_kappa(labels, labels) is None
    report = agreement_report(labels, labels, positive_label="pass", resamples=50)
    assert report.agreement == 1.0
    assert report.kappa is None
    assert report.kappa_interval is None
    assert any("undefined" in note for note in report.notes)
    assert report.base_rate == 1.0


def test_kappa_is_zero_when_people_use_one_label_and_the_judge_agrees_by_chance():
    human = ["pass"] * 10
    judge = ["pass"] * 9 + ["fail"]
    # 90% agreement, yet no better than chance: the kappa paradox users must see.
    assert cohen_kappa(human, judge) == pytest.approx(cohen_kappa_score(human, judge))
    assert cohen_kappa(human, judge) == pytest.approx(0.0)


def test_bootstrap_interval_contains_the_estimate_and_narrows_with_more_items():
    small = bootstrap_kappa_interval(*_pattern(5), seed=7)
    large = bootstrap_kappa_interval(*_pattern(50), seed=7)
    kappa = cohen_kappa(*_pattern(5))
    assert small is not None and large is not None and kappa is not None
    assert small.low <= kappa <= small.high
    assert large.low <= kappa <= large.high
    assert large.high - large.low < (small.high - small.low) / 2


def test_bootstrap_interval_is_reproducible_from_its_seed():
    human, judge = _pattern(8)
    first = bootstrap_kappa_interval(human, judge, resamples=300, seed=3)
    again = bootstrap_kappa_interval(human, judge, resamples=300, seed=3)
    other = bootstrap_kappa_interval(human, judge, resamples=300, seed=4)
    assert first == again
    assert first != other


def test_confusion_matrix_counts_rows_as_people_and_columns_as_judge():
    human = ["pass", "pass", "pass", "fail", "fail"]
    judge = ["pass", "fail", "fail", "fail", "pass"]
    report = agreement_report(human, judge, positive_label="pass", resamples=50)
    assert report.confusion.labels == ["pass", "fail"]
    assert report.confusion.counts == [[1, 2], [1, 1]]
    assert report.base_rate == pytest.approx(0.6)


def test_per_category_figures_cover_only_each_categorys_items():
    human = ["pass", "fail", "pass", "pass", "fail"]
    judge = ["pass", "fail", "fail", "pass", "pass"]
    categories = ["退款", "退款", "预约", "预约", None]
    report = agreement_report(
        human, judge, positive_label="pass", categories=categories, resamples=50
    )
    by_name = {c.category: c for c in report.categories}
    assert set(by_name) == {"退款", "预约"}
    assert by_name["退款"].items == 2 and by_name["退款"].agreement == 1.0
    assert by_name["预约"].agreement == 0.5 and by_name["预约"].base_rate == 1.0


def test_unequal_lengths_are_refused():
    with pytest.raises(InputError, match="3 human labels but 2 judgements"):
        cohen_kappa(["pass", "fail", "pass"], ["pass", "fail"])


def test_report_serialises_with_its_format_version():
    human, judge = _pattern(2)
    report = agreement_report(human, judge, positive_label="pass", resamples=20)
    data = json.loads(report.model_dump_json())
    assert data["format_version"] == 1
    assert data["agreement"] == pytest.approx(accuracy_score(human, judge))
    assert type(report).model_validate_json(report.model_dump_json()) == report
