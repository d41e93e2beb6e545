"""Human labels and judgements made elsewhere, read from files and paired item by item.

Labels are pointwise (``{input, output, label: pass|fail, category?, id?}``; ``true``/
``false`` and ``1``/``0`` also mean pass/fail) or pairwise (``{input, output_1, output_2,
label: 1|2}``, the LLMBar format), one JSON object per line or a JSON list of them.
Judgements are ``{id?, label}`` lines, or an LLMBar evaluator result file, whose ``results``
hold the judge's ``winner`` with the two outputs in each order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from seatrial.errors import InputError
from seatrial.i18n import gettext as _

Kind = Literal["pointwise", "pairwise"]

POSITIVE_LABEL: dict[Kind, str] = {"pointwise": "pass", "pairwise": "1"}
INCONSISTENT = "inconsistent"
"""The judgement of an LLMBar item whose winner changed when the outputs swapped places."""
NO_ANSWER = "no answer"
"""An LLMBar order whose ``winner`` is null: the judge's reply named neither output."""
ORIGINAL_ORDER = "swap = False"
SWAPPED_ORDER = "swap = True"

_POINTWISE = {
    "pass": "pass",
    "fail": "fail",
    "true": "pass",
    "false": "fail",
    "1": "pass",
    "0": "fail",
}
_PAIRWISE = {"1": "1", "2": "2"}


@dataclass(frozen=True)
class HumanLabel:
    """One item as people labelled it."""

    label: str
    """``pass``/``fail`` (pointwise) or ``1``/``2`` (pairwise: the better output)."""
    where: str
    """``file:line`` of the item, for error messages."""
    id: str | None = None
    """The item's id when the file gives one."""
    category: str | None = None
    """The item's category (e.g. an intent such as 退款) when the file gives one."""


@dataclass(frozen=True)
class Judgement:
    """One item as the judge labelled it."""

    label: str
    """Same vocabulary as the human labels, or ``inconsistent`` for an LLMBar item whose
    winner changed with the order of the outputs."""
    where: str
    """``file:line`` of the judgement, for error messages."""
    id: str | None = None
    """The item's id when the file gives one."""
    orders: tuple[str, str] | None = None
    """The judge's choice with the outputs in their original order, then swapped (both name
    the outputs by their original numbers; ``no answer`` where it named neither), when the
    file records both, as LLMBar's result files do."""


@dataclass(frozen=True)
class LabelSet:
    """The human labels of one file."""

    path: Path
    """The file they came from."""
    kind: Kind
    """``pointwise`` (pass/fail) or ``pairwise`` (which of two outputs is better)."""
    items: list[HumanLabel]
    """The labels in file order."""

    @property
    def positive_label(self) -> str:
        """The label whose share is the base rate: ``pass``, or ``1`` for pairwise items."""
        return POSITIVE_LABEL[self.kind]


@dataclass(frozen=True)
class PredictionSet:
    """The judge's labels of one file."""

    path: Path
    """The file they came from."""
    items: list[Judgement]
    """The judgements in file order."""


def _read_records(path: Path) -> list[tuple[int, Any]]:
    """(line, value) for each record of a JSONL file or of a JSON list."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            _("cannot read {path}: {why}; check the path").format(path=path, why=exc.strerror)
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            _("{path} is not UTF-8 text: save it as UTF-8 JSON or JSONL").format(path=path)
        ) from exc
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] == "[":
        return _read_json_list(path, text, start)
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(
                _("{where}: not valid JSON ({why}); write one JSON object per line").format(
                    where=f"{path}:{number}", why=exc.msg
                )
            ) from exc
    return records


def _read_json_list(path: Path, text: str, start: int) -> list[tuple[int, Any]]:
    # Decode element by element so each record keeps the line it starts on.
    decoder = json.JSONDecoder()
    records: list[tuple[int, Any]] = []
    pos = start + 1
    try:
        while True:
            while text[pos].isspace() or (text[pos] == "," and records):
                pos += 1
            if text[pos] == "]":
                return records
            value, end = decoder.raw_decode(text, pos)
            records.append((text.count("\n", 0, pos) + 1, value))
            pos = end
    except json.JSONDecodeError as exc:
        raise InputError(
            _("{where}: not valid JSON ({why}); fix the list").format(
                where=f"{path}:{exc.lineno}", why=exc.msg
            )
        ) from exc
    except IndexError as exc:
        line = text.count("\n") + 1
        raise InputError(
            _("{where}: the JSON list is not closed; end it with ]").format(where=f"{path}:{line}")
        ) from exc


def _object(path: Path, line: int, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(
            _("{where}: expected a JSON object with a `label`, got {type}").format(
                where=f"{path}:{line}", type=type(value).__name__
            )
        )
    return value


def _optional_text(path: Path, line: int, record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(
            _("{where}: `{key}` must be a string, not {value!r}").format(
                where=f"{path}:{line}", key=key, value=value
            )
        )
    return str(value)


def _normalise(path: Path, line: int, value: Any, kind: Kind) -> str:
    vocabulary = _POINTWISE if kind == "pointwise" else _PAIRWISE
    key = str(value).lower() if isinstance(value, bool | int | str) else None
    if key is None or key not in vocabulary:
        if kind == "pointwise":
            said = _(
                "{where}: label {value!r} is not a pointwise label; write pass or fail "
                "(or true/false, 1/0)"
            )
        else:
            said = _("{where}: label {value!r} is not a pairwise label; write 1 or 2")
        raise InputError(said.format(where=f"{path}:{line}", value=value))
    return vocabulary[key]


def _kind_of(path: Path, line: int, record: dict[str, Any]) -> Kind:
    if "output_1" in record or "output_2" in record:
        return "pairwise"
    if "output" in record:
        return "pointwise"
    raise InputError(
        _(
            "{where}: a label needs `output` (pointwise) or `output_1` and `output_2` "
            "(pairwise) beside `input` and `label`"
        ).format(where=f"{path}:{line}")
    )


def load_labels(path: Path | str) -> LabelSet:
    """Read human labels (pointwise or pairwise, JSONL or a JSON list such as LLMBar's)."""
    path = Path(path)
    records = _read_records(path)
    if not records:
        raise InputError(
            _("{path} holds no labels: add one JSON object per labelled item").format(path=path)
        )
    kind: Kind | None = None
    items = []
    for line, value in records:
        record = _object(path, line, value)
        if "label" not in record:
            raise InputError(
                _("{where}: no `label`; give the human verdict of this item").format(
                    where=f"{path}:{line}"
                )
            )
        item_kind = _kind_of(path, line, record)
        if kind is None:
            kind = item_kind
        elif item_kind != kind:
            raise InputError(
                _(
                    "{where}: a {kind} item in a file of {file_kind} items; "
                    "keep pointwise and pairwise labels in separate files"
                ).format(where=f"{path}:{line}", kind=item_kind, file_kind=kind)
            )
        items.append(
            HumanLabel(
                label=_normalise(path, line, record["label"], item_kind),
                where=f"{path}:{line}",
                id=_optional_text(path, line, record, "id"),
                category=_optional_text(path, line, record, "category"),
            )
        )
    assert kind is not None  # records is not empty
    return LabelSet(path=path, kind=kind, items=items)


def _llmbar_winner(path: Path, line: int, run: dict[str, Any], order: str) -> str:
    choice = run.get(order)
    if not isinstance(choice, dict) or "winner" not in choice:
        raise InputError(
            _(
                "{where}: the last entry of `results` has no `{order}` object with a "
                "`winner`; is this an LLMBar evaluator result file?"
            ).format(where=f"{path}:{line}", order=order)
        )
    if choice["winner"] is None:
        return NO_ANSWER
    return _normalise(path, line, choice["winner"], "pairwise")


def _llmbar_judgement(path: Path, line: int, record: dict[str, Any]) -> Judgement:
    results = record["results"]
    if not isinstance(results, list) or not results or not isinstance(results[-1], dict):
        raise InputError(
            _(
                "{where}: `results` must be a list ending with the judge's choices in both "
                "orders ({shape})"
            ).format(
                where=f"{path}:{line}",
                shape="{'swap = False': {winner}, 'swap = True': {winner}}",
            )
        )
    # The last entry is the evaluator's final answer: earlier entries hold auxiliary steps
    # (generated metrics, references) or, for Swap evaluators, the pass before synthesis.
    # LLMBar's own statistics read the last entry only.
    final = results[-1]
    orders = (
        _llmbar_winner(path, line, final, ORIGINAL_ORDER),
        _llmbar_winner(path, line, final, SWAPPED_ORDER),
    )
    # A winner that flips when the outputs swap places is position bias, not a verdict.
    label = orders[0] if orders[0] == orders[1] else INCONSISTENT
    return Judgement(label, f"{path}:{line}", _optional_text(path, line, record, "id"), orders)


def load_predictions(path: Path | str, kind: Kind) -> PredictionSet:
    """Read a judge's labels: ``{id?, label}`` JSONL, or an LLMBar evaluator result file.

    ``kind`` is the kind of the human labels they will be compared with; it decides how a
    label such as ``1`` reads (pass, or the first output).
    """
    path = Path(path)
    records = _read_records(path)
    if not records:
        raise InputError(
            _("{path} holds no judgements: add one JSON object per item").format(path=path)
        )
    items = []
    for line, value in records:
        record = _object(path, line, value)
        if "results" in record:
            if kind != "pairwise":
                raise InputError(
                    _(
                        "{where}: LLMBar results judge pairs, but the labels are pointwise; "
                        "compare them with LLMBar's pairwise labels"
                    ).format(where=f"{path}:{line}")
                )
            items.append(_llmbar_judgement(path, line, record))
            continue
        if "label" not in record:
            raise InputError(
                _("{where}: no `label`; give the judge's verdict of this item").format(
                    where=f"{path}:{line}"
                )
            )
        label = _normalise(path, line, record["label"], kind)
        items.append(Judgement(label, f"{path}:{line}", _optional_text(path, line, record, "id")))
    return PredictionSet(path=path, items=items)


def _by_id(predictions: PredictionSet, labels: LabelSet) -> list[tuple[HumanLabel, Judgement]]:
    judged: dict[str, Judgement] = {}
    for judgement in predictions.items:
        assert judgement.id is not None
        if judgement.id in judged:
            raise InputError(
                _(
                    "{where}: id {id!r} is judged twice (first at {first}); keep one judgement "
                    "per item"
                ).format(where=judgement.where, id=judgement.id, first=judged[judgement.id].where)
            )
        judged[judgement.id] = judgement
    pairs = []
    seen: set[str] = set()
    for item in labels.items:
        assert item.id is not None
        if item.id in seen:
            raise InputError(
                _("{where}: id {id!r} is labelled twice; keep one").format(
                    where=item.where, id=item.id
                )
            )
        seen.add(item.id)
        if item.id not in judged:
            raise InputError(
                _(
                    "{where}: item {id!r} has no judgement in {path}; judge it or remove its label"
                ).format(where=item.where, id=item.id, path=predictions.path)
            )
        pairs.append((item, judged.pop(item.id)))
    if judged:
        extra = next(iter(judged.values()))
        raise InputError(
            _(
                "{where}: id {id!r} is not in the labels {path}; remove the judgement or label "
                "the item"
            ).format(where=extra.where, id=extra.id, path=labels.path)
        )
    return pairs


def match_judgements(
    predictions: PredictionSet, labels: LabelSet
) -> list[tuple[HumanLabel, Judgement]]:
    """Pair each human label with the judge's label of the same item.

    By id when every label and every judgement has one, otherwise by position, in which
    case both files must hold the same number of items.
    """
    if all(j.id is not None for j in predictions.items) and all(
        item.id is not None for item in labels.items
    ):
        return _by_id(predictions, labels)
    if len(predictions.items) != len(labels.items):
        raise InputError(
            _(
                "{predictions} holds {judgements} judgements but {labels} holds {count} labels: "
                "items are matched by position (give both an `id` to match by id), so the "
                "files must list the same items in the same order"
            ).format(
                predictions=predictions.path,
                judgements=len(predictions.items),
                labels=labels.path,
                count=len(labels.items),
            )
        )
    return list(zip(labels.items, predictions.items, strict=True))
