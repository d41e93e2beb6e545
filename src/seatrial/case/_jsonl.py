"""JSONL suites: one case per line, and an optional first line with the suite's own keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seatrial.case._build import RawCase, RawSuite
from seatrial.case._locate import Locator
from seatrial.case._yaml import json_problem, read_text, unreadable
from seatrial.errors import Problem
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

HEAD_KEYS = frozenset({"suite", "defaults", "rubrics", "gate", "agent", "dataset"})
"""Keys of the optional first line; a line with only these keys is not a case."""


def read_jsonl(file: Path, shown: str) -> RawSuite:
    """Read a JSONL suite; each case sits at ``("cases", n)`` on its own line."""
    locator = Locator(lines={(): 1})
    raw = RawSuite(
        file=file,
        shown=shown,
        head={},
        cases=[],
        locator=locator,
        empty_fix=N_('add one case per line, e.g. {{"id": "refund-1", "input": "..."}}'),
    )
    text, raw.problems = read_text(file, shown)
    if text is None:
        return raw
    first = True
    # Only "\n" ends a JSONL line: str.splitlines would also cut at U+2028, U+0085 and
    # other breaks that JSON strings may hold unescaped (a trailing "\r" is JSON whitespace).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            raw.problems.append(json_problem(exc, shown, number))
            first = False
            continue
        except (RecursionError, ValueError) as exc:
            raw.problems.append(unreadable(exc, shown, number, "JSON"))
            first = False
            continue
        if first and _is_head(data):
            raw.head = data
            for key in data:
                locator.lines[(key,)] = number
                if key == "defaults" and isinstance(data[key], dict):
                    locator.lines.update({("defaults", k): number for k in data[key]})
        else:
            if not isinstance(data, dict):
                raw.problems.append(
                    Problem(
                        shown,
                        number,
                        _("each line must be one JSON object (a case), got {type}").format(
                            type=type(data).__name__
                        ),
                        _('write the case as {{"id": ..., "input": ...}} on one line').format(),
                    )
                )
            else:
                path = ("cases", len(raw.cases))
                locator.lines[path] = number
                raw.cases.append(RawCase(unwrap_case(data), path))
        first = False
    return raw


def _is_head(data: Any) -> bool:
    # No case field is a head key, so a line holding only head keys cannot be a case.
    return isinstance(data, dict) and bool(data) and set(data) <= HEAD_KEYS


def unwrap_case(data: dict[str, Any]) -> Any:
    """A case written as ``{"case": {...}}`` (the one-case-per-file layout) is the inner mapping."""
    if set(data) == {"case"}:
        return data["case"]
    return data
