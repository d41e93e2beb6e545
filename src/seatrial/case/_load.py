"""Loading suites from files, and checking files without loading them.

A YAML or JSON file may hold a suite mapping (``suite``, ``defaults``, ``cases`` ...), one
``case:`` mapping, a bare case mapping, or a list of cases. JSONL holds one case per line,
XLSX one per row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seatrial.case._build import RawCase, RawSuite, SuiteHead, build_suite
from seatrial.case._jsonl import read_jsonl
from seatrial.case._locate import Path_
from seatrial.case._model import Suite
from seatrial.case._xlsx import read_xlsx
from seatrial.case._yaml import parse_json, parse_yaml, read_text
from seatrial.errors import Problem, SuiteError
from seatrial.i18n import gettext as _

SUITE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".xlsx")
"""File extensions read as suites."""


def load_suite(path: str | Path) -> Suite:
    """Load and validate one suite file.

    Raises:
        SuiteError: the file is invalid; ``problems`` holds every problem found, each with
            its file, line and fix.
    """
    suite, problems = _read(Path(path))
    if suite is None:
        raise SuiteError(problems)
    return suite


def validate_paths(paths: list[Path]) -> list[Problem]:
    """Every problem in these suite files; a folder stands for the suite files directly in it
    (not in its subfolders, where fixtures live, and not ``seatrial.yaml``).

    An empty list means every file loads.
    """
    problems: list[Problem] = []
    for path in map(Path, paths):
        if not path.is_dir():
            problems.extend(_read(path)[1])
            continue
        files = suite_files_in(path)
        if not files:
            problems.append(
                Problem(
                    str(path),
                    None,
                    _("the folder holds no suite files"),
                    _("put suite files ({suffixes}) in it, or name the files").format(
                        suffixes=", ".join(SUITE_SUFFIXES)
                    ),
                )
            )
        for file in files:
            problems.extend(_read(file)[1])
    return problems


def suite_files_in(folder: Path) -> list[Path]:
    """The suite files directly in ``folder``, sorted by name (not ``seatrial.yaml``, not
    hidden files, not subfolders)."""
    return sorted(p for p in folder.iterdir() if _is_suite_file(p))


def _is_suite_file(path: Path) -> bool:
    # The project's own seatrial.yaml and hidden files sit beside suites but are not suites.
    return (
        path.is_file()
        and path.suffix.lower() in SUITE_SUFFIXES
        and path.name != "seatrial.yaml"
        and not path.name.startswith(".")
    )


def _read(path: Path) -> tuple[Suite | None, list[Problem]]:
    shown = str(path)
    suffix = path.suffix.lower()
    if suffix not in SUITE_SUFFIXES:
        return None, [
            Problem(
                shown,
                None,
                _("`{suffix}` is not a suite format").format(suffix=suffix or path.name),
                _("use a file ending in {suffixes}").format(suffixes=", ".join(SUITE_SUFFIXES)),
            )
        ]
    if path.is_dir():
        return None, [
            Problem(shown, None, _("this is a folder, not a suite file"), _("name a suite file"))
        ]
    # Absolute, so fixtures and the stored suite path do not depend on the working folder.
    file = path.resolve()
    if suffix == ".jsonl":
        raw = read_jsonl(file, shown)
    elif suffix == ".xlsx":
        raw = read_xlsx(file, shown)
    else:
        raw = _read_document(file, shown, as_json=suffix == ".json")
    return build_suite(raw)


def _read_document(file: Path, shown: str, *, as_json: bool) -> RawSuite:
    text, problems = read_text(file, shown)
    if text is None:
        return RawSuite(file, shown, {}, [], parse_yaml("", shown).locator, problems)
    document = parse_json(text, shown) if as_json else parse_yaml(text, shown)
    raw = RawSuite(file, shown, {}, [], document.locator, document.problems)
    data = document.data
    if isinstance(data, list):
        raw.cases = [_raw_case(item, (index,)) for index, item in enumerate(data)]
    elif isinstance(data, dict) and "case" in data and "cases" not in data:
        raw.head = {key: value for key, value in data.items() if key != "case"}
        raw.cases = [RawCase(data["case"], ("case",))]
    elif isinstance(data, dict) and set(data) & set(SuiteHead.model_fields):
        raw.head = data
        cases = data.get("cases")
        if isinstance(cases, list):
            raw.cases = [_raw_case(item, ("cases", index)) for index, item in enumerate(cases)]
    elif isinstance(data, dict):
        raw.cases = [RawCase(data, ())]
    elif data is not None:
        raw.problems.append(
            Problem(
                shown,
                document.locator.line(()),
                _("the file holds {type}, not a suite").format(type=type(data).__name__),
                _(
                    "write a mapping with `suite:` and `cases:`, one case mapping, or a list of "
                    "cases"
                ),
            )
        )
    return raw


def _raw_case(item: Any, path: Path_) -> RawCase:
    if isinstance(item, dict) and set(item) == {"case"}:
        return RawCase(item["case"], (*path, "case"))
    return RawCase(item, path)
