"""Agreement between a judge and people: accuracy, Cohen's kappa with a bootstrap interval,
the confusion matrix, per-category figures, the base rate and, for a pairwise judge asked in
both orders of the outputs, LLMBar's per-order figures.

Pure functions over two equally long sequences of labels (the human one first). No numpy:
the figures are sums over a few hundred items, and the CLI should not need a numeric stack.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from seatrial.errors import InputError
from seatrial.i18n import N_, english, phrased
from seatrial.i18n import gettext as _
from seatrial.judge._labels import NO_ANSWER

_UNDEFINED_KAPPA = phrased(
    "kappa is undefined: the human labels and the judgements all use the same single label, "
    "so chance agreement is 1; label items of both kinds to measure the judge"
)


class KappaInterval(BaseModel):
    """A percentile bootstrap interval for Cohen's kappa."""

    model_config = ConfigDict(frozen=True)

    low: float
    """Lower bound of the interval."""
    high: float
    """Upper bound of the interval."""
    confidence: float
    """Coverage of the interval, e.g. 0.95."""
    resamples: int
    """Number of bootstrap resamples drawn (items drawn with replacement)."""
    undefined_resamples: int
    """Resamples where kappa was undefined (one label only); they are left out of the bounds."""
    seed: int
    """Seed of the random generator, so the interval can be reproduced exactly."""


class ConfusionMatrix(BaseModel):
    """Counts of (human label, judge label) pairs."""

    model_config = ConfigDict(frozen=True)

    labels: list[str]
    """Label order of both the rows and the columns."""
    counts: list[list[int]]
    """``counts[i][j]``: items people labelled ``labels[i]`` and the judge ``labels[j]``."""


class CategoryAgreement(BaseModel):
    """Agreement within one category of items (e.g. one intent such as 退款)."""

    model_config = ConfigDict(frozen=True)

    category: str
    """The category name as written in the labels file."""
    items: int
    """Number of items in the category."""
    agreement: float
    """Share of the category's items where the judge agrees with people."""
    kappa: float | None
    """Cohen's kappa within the category; ``None`` where it is undefined (one label only)."""
    base_rate: float
    """Share of the category's human labels equal to the positive label."""


class PositionalFigures(BaseModel):
    """LLMBar's figures for a pairwise judge asked twice per item, the second time with the
    two outputs swapped. Each figure keeps the name LLMBar gives it (its paper, and the key
    in its ``statistics.json``), so they compare with LLMBar's published tables."""

    model_config = ConfigDict(frozen=True)

    items: int
    """Number of items, each judged in both orders."""
    original_order_correct: int
    """Items where the choice with the outputs in their original order is the human one."""
    swapped_order_correct: int
    """Items where the choice with the outputs swapped is the human one."""
    both_orders_correct: int
    """Items where both choices are the human one."""
    same_choice: int
    """Items where the judge gave the same answer in both orders (as in LLMBar, an item it
    answered in neither order counts too; the report's notes say how many)."""
    original_order_accuracy: float
    """``original_order_correct / items`` (LLMBar's ``correct_False``)."""
    swapped_order_accuracy: float
    """``swapped_order_correct / items`` (LLMBar's ``correct_True``)."""
    average_accuracy: float
    """The mean of the two per-order accuracies: LLMBar's headline "average accuracy"
    (Acc., ``correct_average``). An item judged right in one order only counts half."""
    both_orders_accuracy: float
    """``both_orders_correct / items`` (LLMBar's ``correct_both``): the same as the report's
    ``agreement``, where a choice that changes with the order counts as wrong."""
    positional_agreement_rate: float
    """``same_choice / items``: LLMBar's "positional agreement rate" (Agr., ``equal``)."""


def positional_figures(
    human: Sequence[str], orders: Sequence[tuple[str, str]]
) -> PositionalFigures:
    """LLMBar's figures from each item's human label and the judge's two choices (outputs in
    their original order, then swapped; both naming the outputs by their original number)."""
    _check_lengths(human, orders)
    n = len(human)
    original = sum(h == first for h, (first, _) in zip(human, orders, strict=True))
    swapped = sum(h == second for h, (_, second) in zip(human, orders, strict=True))
    both = sum(h == first == second for h, (first, second) in zip(human, orders, strict=True))
    same = sum(first == second for first, second in orders)
    return PositionalFigures(
        items=n,
        original_order_correct=original,
        swapped_order_correct=swapped,
        both_orders_correct=both,
        same_choice=same,
        original_order_accuracy=original / n,
        swapped_order_accuracy=swapped / n,
        average_accuracy=(original + swapped) / (2 * n),
        both_orders_accuracy=both / n,
        positional_agreement_rate=same / n,
    )


class AgreementReport(BaseModel):
    """How far a judge's labels agree with human labels on the same items."""

    model_config = ConfigDict(frozen=True)

    format_version: Literal[1] = 1
    """Version of this record's format."""
    items: int
    """Number of items compared."""
    agreement: float
    """Accuracy: share of items where the judge's label equals the human label."""
    kappa: float | None
    """Cohen's kappa (agreement corrected for chance); ``None`` where it is undefined."""
    kappa_interval: KappaInterval | None
    """Bootstrap interval for kappa; ``None`` where kappa is undefined on every resample."""
    confusion: ConfusionMatrix
    """Rows are human labels, columns the judge's."""
    positive_label: str
    """The label whose share is the base rate (``pass`` pointwise, ``1`` pairwise)."""
    base_rate: float
    """Share of human labels equal to ``positive_label``: the accuracy a judge that always
    says it would reach."""
    categories: list[CategoryAgreement] = Field(default_factory=list)
    """Per-category figures, sorted by category; empty when no item has a category."""
    notes: list[str] = Field(default_factory=list)
    """Warnings a reader needs to interpret the figures (e.g. why kappa is undefined), in
    English (what a calibration stores and ``--format json`` prints)."""
    said: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    """The notes as messages, in the same order, printed in the reader's language; not part
    of the report's JSON."""
    positional: PositionalFigures | None = None
    """LLMBar's per-order figures, for pairwise judgements made in both orders of the
    outputs; ``None`` otherwise (pointwise labels, or one choice per item)."""


def _check_lengths(human: Sequence[str], predicted: Sequence[object]) -> None:
    if len(human) != len(predicted):
        raise InputError(
            _(
                "{labels} human labels but {judgements} judgements: "
                "give one judgement per labelled item"
            ).format(labels=len(human), judgements=len(predicted))
        )
    if not human:
        raise InputError(_("no items to compare: the labels file holds no labelled item"))


def _kappa_from_counts(pairs: Counter[tuple[str, str]], n: int) -> float | None:
    agreed = sum(count for (h, p), count in pairs.items() if h == p)
    human_totals: Counter[str] = Counter()
    judge_totals: Counter[str] = Counter()
    for (h, p), count in pairs.items():
        human_totals[h] += count
        judge_totals[p] += count
    observed = agreed / n
    expected = sum(human_totals[label] * judge_totals[label] for label in human_totals) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def cohen_kappa(human: Sequence[str], predicted: Sequence[str]) -> float | None:
    """Cohen's kappa between two raters' labels of the same items.

    Returns ``None`` when it is undefined: both raters gave every item the same single label,
    so chance agreement is already perfect.
    """
    _check_lengths(human, predicted)
    return _kappa_from_counts(Counter(zip(human, predicted, strict=True)), len(human))


def _quantile(sorted_values: list[float], q: float) -> float:
    # Linear interpolation between order statistics (numpy's default), so figures match it.
    position = q * (len(sorted_values) - 1)
    lower = int(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * fraction


def bootstrap_kappa_interval(
    human: Sequence[str],
    predicted: Sequence[str],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> KappaInterval | None:
    """A percentile bootstrap interval for Cohen's kappa, resampling items with replacement.

    Seeded, so the same inputs give the same interval. Resamples where kappa is undefined
    are counted and left out; ``None`` when every resample is undefined.
    """
    _check_lengths(human, predicted)
    if resamples < 1:
        raise InputError(_("resamples must be at least 1, not {n}").format(n=resamples))
    if not 0.0 < confidence < 1.0:
        raise InputError(
            _("confidence must be between 0 and 1, not {value}").format(value=confidence)
        )
    pairs = list(zip(human, predicted, strict=True))
    n = len(pairs)
    rng = random.Random(seed)
    values: list[float] = []
    for _resample in range(resamples):
        value = _kappa_from_counts(Counter(rng.choices(pairs, k=n)), n)
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    tail = (1.0 - confidence) / 2.0
    return KappaInterval(
        low=_quantile(values, tail),
        high=_quantile(values, 1.0 - tail),
        confidence=confidence,
        resamples=resamples,
        undefined_resamples=resamples - len(values),
        seed=seed,
    )


def _label_order(human: Sequence[str], predicted: Sequence[str], positive: str) -> list[str]:
    # The positive label first, then human labels, then labels only the judge used.
    order = [positive]
    for label in sorted(set(human)) + sorted(set(predicted) - set(human)):
        if label not in order:
            order.append(label)
    return order


def _confusion(
    human: Sequence[str], predicted: Sequence[str], labels: list[str]
) -> ConfusionMatrix:
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for h, p in zip(human, predicted, strict=True):
        counts[index[h]][index[p]] += 1
    return ConfusionMatrix(labels=labels, counts=counts)


def _agreement(human: Sequence[str], predicted: Sequence[str]) -> float:
    return sum(h == p for h, p in zip(human, predicted, strict=True)) / len(human)


def _per_category(
    human: Sequence[str],
    predicted: Sequence[str],
    categories: Sequence[str | None],
    positive: str,
) -> list[CategoryAgreement]:
    grouped: dict[str, tuple[list[str], list[str]]] = {}
    for h, p, category in zip(human, predicted, categories, strict=True):
        if category is None:
            continue
        hs, ps = grouped.setdefault(category, ([], []))
        hs.append(h)
        ps.append(p)
    return [
        CategoryAgreement(
            category=category,
            items=len(hs),
            agreement=_agreement(hs, ps),
            kappa=cohen_kappa(hs, ps),
            base_rate=hs.count(positive) / len(hs),
        )
        for category, (hs, ps) in sorted(grouped.items())
    ]


def agreement_report(
    human: Sequence[str],
    predicted: Sequence[str],
    *,
    positive_label: str,
    categories: Sequence[str | None] | None = None,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    orders: Sequence[tuple[str, str]] | None = None,
) -> AgreementReport:
    """Every agreement figure for a judge's labels against human labels of the same items.

    ``human[i]`` and ``predicted[i]`` label the same item; ``categories[i]``, when given,
    groups it for the per-category figures. ``positive_label`` is the label whose share of
    the human labels is the base rate. ``orders[i]``, for a pairwise judge asked in both
    orders of the outputs, holds its two choices of item ``i`` (original order, swapped);
    with it the report carries LLMBar's per-order figures.
    """
    _check_lengths(human, predicted)
    if categories is not None and len(categories) != len(human):
        raise InputError(
            _("{count} categories for {n} items: give one per item").format(
                count=len(categories), n=len(human)
            )
        )
    if orders is not None and len(orders) != len(human):
        raise InputError(
            _("{count} order pairs for {n} items: give one per item").format(
                count=len(orders), n=len(human)
            )
        )
    kappa = cohen_kappa(human, predicted)
    notes: list[dict[str, Any]] = []
    if kappa is None:
        notes.append(_UNDEFINED_KAPPA)
    base_rate = list(human).count(positive_label) / len(human)
    if base_rate in (0.0, 1.0):
        one_kind = (
            N_(
                "every human label is not {label}: kappa and agreement say little about a judge "
                "measured on one kind of item"
            )
            if base_rate == 0.0
            else N_(
                "every human label is {label}: kappa and agreement say little about a judge "
                "measured on one kind of item"
            )
        )
        notes.append(phrased(one_kind, label=repr(positive_label)))
    notes += _unanswered_note(orders)
    return AgreementReport(
        items=len(human),
        agreement=_agreement(human, predicted),
        kappa=kappa,
        kappa_interval=bootstrap_kappa_interval(
            human, predicted, resamples=resamples, confidence=confidence, seed=seed
        ),
        confusion=_confusion(human, predicted, _label_order(human, predicted, positive_label)),
        positive_label=positive_label,
        base_rate=base_rate,
        categories=_per_category(
            human, predicted, categories or [None] * len(human), positive_label
        ),
        notes=[english(note) for note in notes],
        said=notes,
        positional=positional_figures(human, orders) if orders is not None else None,
    )


def _unanswered_note(orders: Sequence[tuple[str, str]] | None) -> list[dict[str, Any]]:
    if orders is None:
        return []
    unanswered = sum(choice == NO_ANSWER for pair in orders for choice in pair)
    if not unanswered:
        return []
    neither = sum(pair == (NO_ANSWER, NO_ANSWER) for pair in orders)
    return [
        phrased(
            "the judge named neither output in {unanswered} of {answers} answers; they count "
            "as wrong, and the {neither} items unanswered in both orders count as positionally "
            "agreeing, as in LLMBar's own figures",
            unanswered=unanswered,
            answers=2 * len(orders),
            neither=neither,
        )
    ]
