"""Golden sets: composition checks, and import and export as JSONL, YAML or Excel.

The versions themselves live in the store (:meth:`seatrial.store.Store.golden_append`); this
module reads and writes the files people edit, and checks a set against the golden-set
requirements, which are warnings with figures, never errors:

- P0 cases are at least 40% of the set (the core flows: ordering, lookups, cancelling,
  refunds);
- multi-turn cases are at least 50%;
- at least ten anti-hallucination cases (an order that does not exist, made-up facts);
- no expected category is left without cases.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from seatrial.case import Case, load_suite
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.registry import lookup
from seatrial.store import GoldenSnapshot, Store

P0_SHARE_MIN = 0.4
"""Least share of P0 cases in a golden set."""
MULTI_TURN_SHARE_MIN = 0.5
"""Least share of multi-turn cases in a golden set."""
ANTI_HALLUCINATION_MIN = 10
"""Fewest anti-hallucination cases in a golden set."""

HALLUCINATION_MARKS = ("hallucination", "幻觉")
"""A category or tag containing one of these (``anti-hallucination``, ``反幻觉``) marks an
anti-hallucination case."""

GOLDEN_FORMATS = (".jsonl", ".yaml", ".yml", ".xlsx")
"""File extensions a golden set is exported to (any suite format imports)."""

# The Excel columns a case goes to, in this order; the reader (seatrial.case) names them.
_XLSX_HEADER = (
    "ID",
    "Name",
    "Category",
    "Priority",
    "Tags",
    "Question",
    "Expected Task",
    "Expected Tool",
    "Expected Skill",
    "Expected Result",
)
# Written by the Excel reader on every import, so never a difference worth reporting.
_EXCEL_MARKS = ("source",)
_ROW_KEY = "row"


@dataclass(frozen=True)
class CompositionWarning:
    """A golden set misses one of the requirements, with the figures that show it."""

    check: str
    """``p0_share``, ``multi_turn_share``, ``anti_hallucination`` or ``empty_category``."""
    message: str
    """What is missing, with the figures, for people."""
    actual: float
    """The figure found (a share in [0, 1], or a number of cases)."""
    required: float
    """The figure the requirement asks for."""


def composition(
    cases: Sequence[Case], *, categories: Iterable[str] = ()
) -> list[CompositionWarning]:
    """Check ``cases`` against the golden-set requirements; an empty list means all met.

    ``categories`` are the categories the set should cover (e.g. every category the set
    ever had, and those a person names); each without an active case is a warning.
    """
    total = len(cases)
    warnings: list[CompositionWarning] = []
    p0 = sum(1 for case in cases if case.priority == "P0")
    if _share(p0, total) < P0_SHARE_MIN:
        warnings.append(
            CompositionWarning(
                "p0_share",
                _(
                    "P0 cases are {share} of the set ({count} of {total}); at least {minimum} "
                    "should be P0"
                ).format(
                    share=_percent(p0, total), count=p0, total=total, minimum=f"{P0_SHARE_MIN:.0%}"
                ),
                _share(p0, total),
                P0_SHARE_MIN,
            )
        )
    multi = sum(1 for case in cases if case.kind == "multi_turn")
    if _share(multi, total) < MULTI_TURN_SHARE_MIN:
        warnings.append(
            CompositionWarning(
                "multi_turn_share",
                _(
                    "multi-turn cases are {share} of the set ({count} of {total}); at least "
                    "{minimum} should be multi-turn"
                ).format(
                    share=_percent(multi, total),
                    count=multi,
                    total=total,
                    minimum=f"{MULTI_TURN_SHARE_MIN:.0%}",
                ),
                _share(multi, total),
                MULTI_TURN_SHARE_MIN,
            )
        )
    anti = sum(1 for case in cases if is_anti_hallucination(case))
    if anti < ANTI_HALLUCINATION_MIN:
        warnings.append(
            CompositionWarning(
                "anti_hallucination",
                _(
                    "{count} anti-hallucination cases; at least {minimum} should ask for "
                    "something that does not exist (tag them `anti-hallucination`, or check "
                    "with `no_fabricated_ids` or `factuality`)"
                ).format(count=anti, minimum=ANTI_HALLUCINATION_MIN),
                anti,
                ANTI_HALLUCINATION_MIN,
            )
        )
    present = {case.category for case in cases}
    for category in sorted(set(categories) - present - {""}):
        warnings.append(
            CompositionWarning(
                "empty_category",
                _("category {category} has no active cases").format(category=repr(category)),
                0,
                1,
            )
        )
    return warnings


def is_anti_hallucination(case: Case) -> bool:
    """A case that checks the agent does not make things up.

    Its category or a tag contains ``hallucination`` or ``幻觉``, or an assertion checks for
    it: ``business_rule`` with ``rule: no_fabricated_ids``, or any type whose failure type
    is ``hallucination`` (``factuality``).
    """
    labels = [case.category, *case.tags]
    if any(mark in label.lower() for label in labels for mark in HALLUCINATION_MARKS):
        return True
    for spec in case.assertions:
        if spec.params.get("rule") == "no_fabricated_ids":
            return True
        try:
            if lookup(spec.type).failure_type == "hallucination":
                return True
        except KeyError:
            continue
    return False


def parse_dataset_ref(ref: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION`` -> (name, version or None for the newest)."""
    name, at, version = ref.partition("@")
    if not name:
        raise InputError(
            _("{ref} names no golden set; write NAME or NAME@VERSION").format(ref=repr(ref))
        )
    if not at:
        return name, None
    if not version.isdigit() or int(version) < 1:
        raise InputError(
            _("{ref}: the version after `@` is a whole number from 1, as in {name}@3").format(
                ref=repr(ref), name=name
            )
        )
    return name, int(version)


def import_golden(store: Store, name: str, path: str | Path, *, who: str, note: str = "") -> int:
    """Add (or edit) the cases of a suite file (YAML, JSON, JSONL, XLSX) in golden set
    ``name``; return the version written (the current one when nothing changed).

    Cases of the set that the file does not hold stay as they are: retire them by name.
    """
    suite = load_suite(path)
    return store.golden_append(
        name, add=suite.cases, who=who, note=note or f"imported {Path(path).name}"
    )


def export_golden(snapshot: GoldenSnapshot, path: str | Path, *, lossy: bool = False) -> list[str]:
    """Write ``snapshot``'s cases to ``path`` (.jsonl, .yaml/.yml or .xlsx); reading the
    file back gives the same cases.

    Excel holds only what its columns say (one question, tool, skill and result checks);
    a case with more is refused, naming what would be lost, unless ``lossy``. Returns one
    line per case that lost something (empty for JSONL and YAML).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in GOLDEN_FORMATS:
        raise InputError(
            _(
                "{path}: cannot export a golden set as `{suffix}`; use a file ending in {formats}"
            ).format(path=path, suffix=suffix or path.name, formats=", ".join(GOLDEN_FORMATS))
        )
    if suffix == ".jsonl":
        lines = [json.dumps({"suite": snapshot.dataset}, ensure_ascii=False)]
        lines += [json.dumps(_plain(case), ensure_ascii=False) for case in snapshot.cases]
        _write_text(path, "\n".join(lines) + "\n")
        return []
    if suffix in (".yaml", ".yml"):
        document = {"suite": snapshot.dataset, "cases": [_plain(c) for c in snapshot.cases]}
        _write_text(path, yaml.safe_dump(document, allow_unicode=True, sort_keys=False))
        return []
    return _export_xlsx(snapshot, path, lossy)


def _export_xlsx(snapshot: GoldenSnapshot, path: Path, lossy: bool) -> list[str]:
    try:
        import openpyxl
    except ImportError as exc:
        raise InputError(
            _('writing .xlsx needs the openpyxl package: pip install "seatrial[excel]"')
        ) from exc
    extra = list(
        dict.fromkeys(
            key
            for case in snapshot.cases
            for key in case.metadata
            if key not in ("expected_task", _ROW_KEY)
        )
    )
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "cases"
    for row_number, row in enumerate(
        [[*_XLSX_HEADER, *extra], *(_xlsx_row(case, extra) for case in snapshot.cases)], start=1
    ):
        for column, value in enumerate(row, start=1):
            cell = sheet.cell(row=row_number, column=column, value=value)
            if value.startswith("="):
                cell.data_type = "s"  # text from people or traces, never a formula
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(suffix=".xlsx", dir=path.parent)
    os.close(handle)
    try:
        workbook.save(temporary)
        losses = _losses(snapshot.cases, load_suite(temporary).cases) if snapshot.cases else []
        if losses and not lossy:
            shown = "; ".join(losses[:5]) + ("; ..." if len(losses) > 5 else "")
            raise InputError(
                _(
                    "{path}: the Excel columns cannot hold {count} of the cases "
                    "({shown}); export to .jsonl or .yaml, which keep every field, or "
                    "pass --lossy"
                ).format(path=path, count=len(losses), shown=shown)
            )
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return losses


def _xlsx_row(case: Case, extra: list[str]) -> list[str]:
    tools: list[str] = []
    skill = result = ""
    for spec in case.assertions:
        params = spec.params
        if spec.type == "tool_called" and params.get("match") == "prefix":
            tools.append(str(params.get("expected", "")))
        elif spec.type == "skill_routed" and not skill:
            skill = str(params.get("expected", ""))
        elif spec.type == "semantic" and not result:
            result = str(params.get("criteria", ""))
    question = case.input if case.input is not None else "\n".join(case.user_turns)
    cells = [
        case.id,
        case.name,
        case.category,
        case.priority,
        ", ".join(case.tags),
        question,
        str(case.metadata.get("expected_task", "")),
        ", ".join(tools),
        skill,
        result,
    ]
    return cells + [_cell_text(case.metadata.get(key)) for key in extra]


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _losses(written: Sequence[Case], read: Sequence[Case]) -> list[str]:
    """``case: fields`` for every case that does not read back as it was written."""
    by_id = {case.id: case for case in read}
    losses: list[str] = []
    for case in written:
        again = by_id.get(case.id)
        if again is None:
            losses.append(_("{case_id}: not read back").format(case_id=case.id))
            continue
        before, after = _comparable(case), _comparable(again)
        fields = [key for key in before if before[key] != after.get(key)]
        if fields:
            losses.append(f"{case.id}: {', '.join(fields)}")
    return losses


def _comparable(case: Case) -> dict[str, Any]:
    data = case.model_dump(mode="json", exclude=set(_EXCEL_MARKS))
    data["metadata"] = {k: v for k, v in data["metadata"].items() if k != _ROW_KEY}
    return data


def _plain(case: Case) -> dict[str, Any]:
    """The case as a suite file writes it: only the fields that differ from the defaults."""
    return case.model_dump(mode="json", exclude_defaults=True)


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _share(count: int, total: int) -> float:
    return count / total if total else 0.0


def _percent(count: int, total: int) -> str:
    return f"{_share(count, total):.0%}"
