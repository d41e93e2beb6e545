"""Agreement statistics, checked against scikit-learn and against their definitions."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from seatrial.errors import InputError
from seatrial.judge import agreement_report, bootstrap_kappa_interval, cohen_kappa
from seatrial.judge._stats import positional_figures


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


def test_llmbar_figures_separate_each_order_and_their_mean_from_both_orders_correct():
    # Four items, labelled 1, 1, 2, 2. The judge: right in both orders; right only when the
    # outputs keep their order (it always picks the first shown); wrong in both; right only
    # when they are swapped.
    human = ["1", "1", "2", "2"]
    orders = [("1", "1"), ("1", "2"), ("1", "1"), ("1", "2")]
    figures = positional_figures(human, orders)
    assert (figures.original_order_correct, figures.swapped_order_correct) == (2, 2)
    assert figures.original_order_accuracy == 0.5 and figures.swapped_order_accuracy == 0.5
    assert figures.average_accuracy == 0.5
    # Only the first item is right in both orders: the mean of the orders is not this figure.
    assert figures.both_orders_correct == 1 and figures.both_orders_accuracy == 0.25
    assert figures.same_choice == 2 and figures.positional_agreement_rate == 0.5


def test_llmbar_average_accuracy_gives_half_a_point_to_an_order_dependent_right_answer():
    figures = positional_figures(["1", "2"], [("1", "1"), ("2", "1")])
    assert figures.original_order_accuracy == 1.0
    assert figures.swapped_order_accuracy == 0.5
    assert figures.average_accuracy == 0.75
    assert figures.both_orders_accuracy == 0.5


def test_report_carries_llmbar_figures_only_when_both_orders_are_given():
    human = ["1", "2", "1"]
    judged = ["1", "inconsistent", "2"]
    with_orders = agreement_report(
        human, judged, positive_label="1", resamples=50,
        orders=[("1", "1"), ("2", "1"), ("2", "2")],
    )  # fmt: skip
    assert with_orders.positional is not None
    assert with_orders.positional.both_orders_accuracy == with_orders.agreement == 1 / 3
    assert with_orders.positional.original_order_accuracy == 2 / 3
    assert json.loads(with_orders.model_dump_json())["positional"]["average_accuracy"] == 0.5
    assert agreement_report(human, judged, positive_label="1", resamples=50).positional is None


def test_llmbar_figures_count_unanswered_items_as_wrong_and_say_so():
    report = agreement_report(
        ["1", "2"], ["no answer", "2"], positive_label="1", resamples=50,
        orders=[("no answer", "no answer"), ("2", "2")],
    )  # fmt: skip
    assert report.positional is not None
    assert report.positional.original_order_accuracy == 0.5
    # LLMBar counts an item unanswered in both orders as positionally agreeing; the note
    # tells the reader so that 100% is not read as a steady judge.
    assert report.positional.positional_agreement_rate == 1.0
    assert any("named neither output in 2 of 4 answers" in note for note in report.notes)


def test_llmbar_figures_refuse_a_missing_order_pair():
    with pytest.raises(InputError, match="1 order pairs for 2 items"):
        agreement_report(["1", "2"], ["1", "2"], positive_label="1", orders=[("1", "1")])
