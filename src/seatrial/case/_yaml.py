"""Reading YAML and JSON files into plain data plus the line of every key."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from seatrial.case._locate import Locator
from seatrial.errors import Problem


@dataclass
class Document:
    """One parsed file: its data, where each part was written, and what went wrong."""

    data: Any = None
    locator: Locator = field(default_factory=Locator)
    problems: list[Problem] = field(default_factory=list)


def read_text(path: Path, shown: str) -> tuple[str | None, list[Problem]]:
    """The file's text as UTF-8, or a problem saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8-sig"), []
    except FileNotFoundError:
        return None, [Problem(shown, None, "file not found", "check the path and the folder")]
    except UnicodeDecodeError as exc:
        return None, [
            Problem(
                shown,
                None,
                f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})",
                "save it as UTF-8 (in most editors: Save As, encoding UTF-8)",
            )
        ]
    except OSError as exc:
        return None, [
            Problem(
                shown,
                None,
                f"cannot read the file: {exc.strerror}",
                "check that the path names a readable file, not a folder",
            )
        ]


def parse_yaml(text: str, shown: str) -> Document:
    """Parse YAML text; a syntax error becomes a problem on the line where YAML noticed it."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and (mark is None or mark.line >= text.count("\n")):
            # At the end of the file YAML notices only that something was left open; the
            # place where it was opened is the line to look at.
            mark = exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            what = f"{exc.context}, {exc.problem}"
        return Document(
            problems=[
                Problem(
                    shown,
                    line,
                    f"YAML syntax error: {what}",
                    "check the indentation and quoting on this line and the one above; quote "
                    "values that contain `: ` or `#`, or start with `*`, `&`, `!`, `[` or `{`",
                )
            ]
        )
    except yaml.YAMLError as exc:
        return Document(problems=[Problem(shown, None, f"YAML error: {exc}", "fix the YAML")])
    locator = Locator.from_yaml(node)
    problems = [
        Problem(
            shown,
            dup.line,
            f"key `{dup.path[-1]}` is written twice in the same mapping (also on line "
            f"{dup.first_line}); only the last value would be kept",
            "delete one of the two",
        )
        for dup in locator.duplicates
    ]
    return Document(data, locator, problems)


def parse_json(text: str, shown: str) -> Document:
    """Parse JSON text; lines come from reading it as YAML, which JSON almost always is."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return Document(problems=[json_problem(exc, shown, exc.lineno)])
    try:
        locator = Locator.from_yaml(yaml.compose(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        # Valid JSON that YAML rejects (tabs used as indentation): the data is fine, only the
        # line numbers are lost.
        locator = Locator()
    return Document(data, locator)


def json_problem(exc: json.JSONDecodeError, shown: str, line: int) -> Problem:
    """A JSON syntax error as a problem on ``line``."""
    return Problem(
        shown,
        line,
        f"invalid JSON: {exc.msg} (column {exc.colno})",
        "check for a missing comma or quote, a trailing comma, or single quotes (JSON "
        "needs double quotes)",
    )
