"""Excel suites: the first sheet, one case per row under a header row.

==================  =====================================================================
column              becomes
==================  =====================================================================
Question            ``input``
Expected Task       ``category`` (unless there is a Category column) and
                    ``metadata.expected_task``
Expected Tool       one ``tool_called`` assertion per tool, matched by name prefix
Expected Skill      a ``skill_routed`` assertion with ``must_pass: false``
Expected Result     a ``semantic`` (LLM judge) assertion with these ``criteria``
ID, Name,           ``id`` (default ``<file stem>-<row>``), ``name``, ``category``,
Category,           ``priority``, ``tags`` (comma separated)
Priority, Tags
anything else       kept in ``metadata`` under the column's header
==================  =====================================================================
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path
from typing import Any

from seatrial.case._build import RawCase, RawSuite
from seatrial.case._explain import suggest
from seatrial.case._locate import Locator
from seatrial.errors import Problem
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

COLUMNS = {
    "question": "Question",
    "expected skill": "Expected Skill",
    "expected task": "Expected Task",
    "expected tool": "Expected Tool",
    "expected result": "Expected Result",
    "id": "ID",
    "name": "Name",
    "category": "Category",
    "priority": "Priority",
    "tags": "Tags",
}
"""Recognised headers (compared case-insensitively, ``_`` and ``-`` read as spaces)."""

_LIST_SEPARATORS = re.compile(r"[,，;；、\n]")


def read_xlsx(file: Path, shown: str) -> RawSuite:
    """Read the first sheet of a workbook; case ``n`` sits at ``("cases", n)`` on its row."""
    raw = RawSuite(
        file=file,
        shown=shown,
        head={},
        cases=[],
        locator=Locator(lines={(): 1}),
        empty_fix=N_("add one row per case under the header row, with at least a Question"),
    )
    try:
        import openpyxl
    except ImportError:
        raw.problems.append(
            Problem(
                shown,
                None,
                _("reading .xlsx suites needs the openpyxl package, which is not installed"),
                'pip install "seatrial[excel]"',  # untranslated: a command line
            )
        )
        return raw
    try:
        workbook = openpyxl.load_workbook(file, read_only=True, data_only=True)
        try:
            rows = [
                [_text(cell) for cell in row]
                for row in workbook.worksheets[0].iter_rows(values_only=True)
            ]
        finally:
            workbook.close()
    except FileNotFoundError:
        raw.problems.append(Problem(shown, None, _("file not found"), _("check the path")))
        return raw
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raw.problems.append(_not_a_workbook(shown, str(exc)))
        return raw
    except Exception as exc:  # noqa: BLE001
        # A damaged part raises whatever openpyxl's zip, deflate and XML readers raise
        # (zlib.error, EOFError, ParseError, IndexError, NotImplementedError).
        kind = type(exc).__qualname__
        if type(exc).__module__ != "builtins":
            kind = f"{type(exc).__module__}.{kind}"
        raw.problems.append(_not_a_workbook(shown, _("a damaged part: {kind}").format(kind=kind)))
        return raw
    _read_rows(raw, rows)
    return raw


def _not_a_workbook(shown: str, why: str) -> Problem:
    return Problem(
        shown,
        None,
        _("cannot read the file as an Excel workbook ({why})").format(why=why),
        _("save it from Excel as .xlsx (an .xls or a renamed .csv is not a workbook)"),
    )


def _read_rows(raw: RawSuite, rows: list[list[str]]) -> None:
    header_at = next((n for n, row in enumerate(rows, start=1) if any(row)), None)
    if header_at is None:
        return  # an empty sheet: the builder reports an empty suite
    columns = _columns(raw, rows[header_at - 1], header_at)
    if columns is None:
        return
    for number, row in enumerate(rows[header_at:], start=header_at + 1):
        if not any(row):
            continue
        cells = {key: row[i] if i < len(row) else "" for i, key in columns.items()}
        if not cells.get("question"):
            raw.problems.append(
                Problem(
                    raw.shown,
                    number,
                    _("row {row}: the Question cell is empty").format(row=number),
                    _("write the user's question in the Question column, or delete the row"),
                )
            )
            continue
        path = ("cases", len(raw.cases))
        raw.locator.lines[path] = number
        label = _("row {row}").format(row=number)
        raw.cases.append(RawCase(_case(raw.file.stem, number, cells), path, label))


def _columns(raw: RawSuite, header: list[str], row: int) -> dict[int, str] | None:
    """Column index -> recognised key, or the header itself for extra columns."""
    columns: dict[int, str] = {}
    for index, title in enumerate(header):
        if not title:
            continue
        key = " ".join(title.lower().replace("_", " ").replace("-", " ").split())
        if key in COLUMNS:
            if key in columns.values():
                raw.problems.append(
                    Problem(
                        raw.shown,
                        row,
                        _("row {row}: the column `{column}` appears twice in the header").format(
                            row=row, column=COLUMNS[key]
                        ),
                        _("delete or rename one of the two columns"),
                    )
                )
            columns[index] = key
            continue
        # Only a near miss is a typo; other headers are extra columns kept as metadata.
        close = suggest(key, COLUMNS, cutoff=0.8)
        if close is not None:
            raw.problems.append(
                Problem(
                    raw.shown,
                    row,
                    _("row {row}: unknown column `{title}`; did you mean `{column}`?").format(
                        row=row, title=title, column=COLUMNS[close]
                    ),
                    _("rename the header to `{column}`").format(column=COLUMNS[close]),
                )
            )
            continue
        columns[index] = title
    if "question" not in columns.values():
        found = ", ".join(f"`{title}`" for title in header if title) or _("nothing")
        raw.problems.append(
            Problem(
                raw.shown,
                row,
                _("row {row}: the header row has no `Question` column (found {found})").format(
                    row=row, found=found
                ),
                _(
                    "name the column holding the user's messages `Question`; the header row is "
                    "the first non-empty row of the first sheet"
                ),
            )
        )
        return None
    return columns


def _case(stem: str, row: int, cells: dict[str, str]) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": cells.get("id") or f"{stem}-{row}",
        "input": cells["question"],
        "source": "excel_import",
    }
    metadata: dict[str, Any] = {"row": row}
    task = cells.get("expected task")
    if task:
        metadata["expected_task"] = task
    category = cells.get("category") or task
    if category:
        case["category"] = category
    for key in ("name", "priority"):
        if cells.get(key):
            case[key] = cells[key]
    if cells.get("tags"):
        case["tags"] = _split(cells["tags"])
    assertions: list[dict[str, Any]] = []
    if cells.get("expected skill"):
        # Agents that call tools directly (e.g. over MCP) often leave no routing evidence in the
        # trace, so a hard `skill_routed` would fail runs that did the right thing.
        assertions.append(
            {"type": "skill_routed", "expected": cells["expected skill"], "must_pass": False}
        )
    for tool in _split(cells.get("expected tool", "")):
        assertions.append({"type": "tool_called", "expected": tool, "match": "prefix"})
    if cells.get("expected result"):
        assertions.append({"type": "semantic", "criteria": cells["expected result"]})
    if assertions:
        case["assertions"] = assertions
    for key, value in cells.items():
        if key not in COLUMNS and value:
            metadata[key] = value
    case["metadata"] = metadata
    return case


def _split(text: str) -> list[str]:
    return [part.strip() for part in _LIST_SEPARATORS.split(text) if part.strip()]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value).strip()
