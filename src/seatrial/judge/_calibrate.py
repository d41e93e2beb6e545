"""Calibration: run the LLM judge over items people labelled and measure how far it agrees.

Pointwise items (``{input, output, label: pass|fail}``) go through :meth:`Judge.judge`;
pairwise items (``{input, output_1, output_2, label: 1|2}``, LLMBar's format) through
:meth:`Judge.compare`. The result is a :class:`Calibration` keyed on (judge model, prompt
hash): the pointwise prompt's hash for pointwise items, the pairwise prompt's for pairwise
ones, since each measures a different prompt. Judge trust reads the pointwise one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from seatrial.errors import InputError
from seatrial.i18n import english, phrased_plural
from seatrial.i18n import gettext as _
from seatrial.judge._labels import Kind, _read_records, load_labels
from seatrial.judge._stats import AgreementReport, agreement_report
from seatrial.judge._types import JudgeError, JudgeInput
from seatrial.store import Calibration

if TYPE_CHECKING:
    from seatrial.judge._llm import Judge
    from seatrial.store import StoredLabel

DEFAULT_CRITERIA = (
    "The reply does what the user asked, correctly and completely, without inventing facts "
    "or actions that did not happen."
)
"""What a labelled item must achieve when its record names no ``criteria`` of its own."""
JUDGE_ERROR = "judge_error"
"""The prediction of an item the judge gave no usable answer for: it counts as a
disagreement, never as a guess."""

_VERDICTS = {"PASS": "pass", "FAIL": "fail", "WARNING": "warning"}


@dataclass(frozen=True)
class LabelledItem:
    """One item people labelled, with the text the judge is shown."""

    input: str
    """What the user said."""
    label: str
    """``pass``/``fail`` (pointwise) or ``1``/``2`` (pairwise)."""
    output: str = ""
    """The reply judged (pointwise)."""
    output_1: str = ""
    """The first of two replies (pairwise)."""
    output_2: str = ""
    """The second of two replies (pairwise)."""
    category: str | None = None
    """The item's category, for per-category agreement."""
    criteria: str = DEFAULT_CRITERIA
    """What the reply must achieve (pointwise)."""
    rubric: str | None = None
    """A rubric for the item, when its record gives one."""


@dataclass(frozen=True)
class LabelledItems:
    """Labelled items of one kind and where they came from."""

    kind: Kind
    """``pointwise`` or ``pairwise``."""
    items: list[LabelledItem]
    """The items, in their source's order."""
    source: str
    """A file path, or ``queue`` for the review queue's labels."""


def _text(record: dict[str, object], key: str, where: str) -> str:
    value = record.get(key, "")
    if not isinstance(value, str):
        raise InputError(
            _("{where}: `{key}` must be text, not {value!r}").format(
                where=where, key=key, value=value
            )
        )
    return value


def read_labelled_items(path: Path | str) -> LabelledItems:
    """Labelled items of a JSONL file or JSON list, checked as ``seatrial judge agreement``
    checks labels, with the texts the judge needs."""
    path = Path(path)
    labels = load_labels(path)
    items = []
    for (line, record), human in zip(_read_records(path), labels.items, strict=True):
        where = f"{path}:{line}"
        criteria = _text(record, "criteria", where) or DEFAULT_CRITERIA
        rubric = _text(record, "rubric", where) or None
        items.append(
            LabelledItem(
                input=_text(record, "input", where),
                label=human.label,
                output=_text(record, "output", where),
                output_1=_text(record, "output_1", where),
                output_2=_text(record, "output_2", where),
                category=human.category,
                criteria=criteria,
                rubric=rubric,
            )
        )
    return LabelledItems(kind=labels.kind, items=items, source=str(path))


def queue_items(labels: Sequence[StoredLabel]) -> LabelledItems:
    """The review queue's human labels as pointwise items."""
    if not labels:
        raise InputError(
            _(
                "the review queue holds no labels yet: label items with `seatrial review`, "
                "or calibrate on a label file (--labels FILE)"
            )
        )
    items = [
        LabelledItem(
            input=label.input,
            label=label.label,
            output=label.output,
            category=label.category or None,
        )
        for label in labels
    ]
    return LabelledItems(kind="pointwise", items=items, source="queue")


async def _predict(judge: Judge, kind: Kind, item: LabelledItem) -> str:
    try:
        if kind == "pairwise":
            return str(await judge.compare(item.input, item.output_1, item.output_2))
        verdict = await judge.judge(
            JudgeInput(
                turns=[item.input],
                reply=item.output,
                criteria=item.criteria,
                rubric=item.rubric,
                category=item.category or "",
            )
        )
    except JudgeError:
        return JUDGE_ERROR
    return _VERDICTS[verdict.verdict]


async def judge_items(judge: Judge, labelled: LabelledItems, *, concurrency: int = 8) -> list[str]:
    """The judge's label of every item, in order (``judge_error`` where it gave none)."""
    if concurrency < 1:
        raise InputError(_("concurrency must be at least 1, not {n}").format(n=concurrency))
    slots = asyncio.Semaphore(concurrency)

    async def one(item: LabelledItem) -> str:
        async with slots:
            return await _predict(judge, labelled.kind, item)

    return list(await asyncio.gather(*(one(item) for item in labelled.items)))


def calibration_of(
    judge: Judge,
    labelled: LabelledItems,
    predictions: Sequence[str],
    *,
    resamples: int = 2000,
    seed: int = 0,
    created_at: float | None = None,
) -> tuple[Calibration, AgreementReport]:
    """The calibration record (and the full report) of these predictions."""
    positive = "1" if labelled.kind == "pairwise" else "pass"
    report = agreement_report(
        [item.label for item in labelled.items],
        list(predictions),
        positive_label=positive,
        categories=[item.category for item in labelled.items],
        resamples=resamples,
        seed=seed,
    )
    errors = sum(1 for p in predictions if p == JUDGE_ERROR)
    if errors:
        note = phrased_plural(
            "the judge gave no usable answer on {n} item; it counts as a disagreement",
            "the judge gave no usable answer on {n} items; they count as disagreements",
            errors,
        )
        report = report.model_copy(
            update={"notes": [*report.notes, english(note)], "said": [*report.said, note]}
        )
    interval = report.kappa_interval
    calibration = Calibration(
        judge_model=judge.model,
        prompt_hash=judge.compare_prompt_hash if labelled.kind == "pairwise" else judge.prompt_hash,
        prompt_version=judge.prompt_version,
        created_at=time.time() if created_at is None else created_at,
        items=report.items,
        agreement=report.agreement,
        kappa=report.kappa,
        kappa_low=interval.low if interval is not None else None,
        kappa_high=interval.high if interval is not None else None,
        base_rate=report.base_rate,
        report={**report.model_dump(mode="json"), "kind": labelled.kind, "source": labelled.source},
    )
    return calibration, report


async def calibrate(
    judge: Judge,
    labelled: LabelledItems,
    *,
    concurrency: int = 8,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[Calibration, AgreementReport]:
    """Judge every labelled item and measure the agreement (nothing is stored here)."""
    predictions = await judge_items(judge, labelled, concurrency=concurrency)
    return calibration_of(judge, labelled, predictions, resamples=resamples, seed=seed)
