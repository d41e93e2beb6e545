"""Reading YAML and JSON files into plain data plus the line of every key.

A file is parsed once: the node tree (which carries the line of every key) is composed, then
constructed into plain data, so the lines and the data come from the same pass. libyaml's C
parser does the composing when PyYAML was built with it (its PyPI wheels are, e.g. for
Linux x86_64), about ten times faster than PyYAML's pure-Python parser on a large suite; a
file the C parser rejects is parsed again by the pure-Python one, whose wording and line of a
syntax error are the ones the docs show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from seatrial.case._locate import Locator
from seatrial.errors import Problem
from seatrial.i18n import gettext as _


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
        return None, [Problem(shown, None, _("file not found"), _("check the path and the folder"))]
    except UnicodeDecodeError as exc:
        return None, [
            Problem(
                shown,
                None,
                _("the file is not UTF-8 text ({reason} at byte {byte})").format(
                    reason=exc.reason, byte=exc.start
                ),
                _("save it as UTF-8 (in most editors: Save As, encoding UTF-8)"),
            )
        ]
    except OSError as exc:
        return None, [
            Problem(
                shown,
                None,
                _("cannot read the file: {error}").format(error=exc.strerror),
                _("check that the path names a readable file, not a folder"),
            )
        ]


FAST_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = (
    yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
)
"""The loader for the first parse: libyaml's when PyYAML has it, else the pure-Python one."""


def compose(text: str, *, construct: bool = True) -> tuple[yaml.Node | None, Any]:
    """The node tree of one YAML document and the plain data built from it, in one parse.

    The same as ``yaml.compose`` plus ``yaml.safe_load`` (the data is None without
    ``construct``, for a caller that needs only the lines); a document the fast loader rejects
    is parsed again by the pure-Python loader, so a syntax error is raised with its wording
    and mark, and input only one of them can read still loads.

    Raises:
        yaml.YAMLError: the text is not one valid YAML document.
    """
    try:
        return _compose(text, FAST_LOADER, construct)
    except yaml.YAMLError as fast_error:
        if FAST_LOADER is yaml.SafeLoader:
            raise
        try:
            return _compose(text, yaml.SafeLoader, construct)
        except RecursionError:
            # Nesting deeper than Python's stack, which libyaml reports as a plain error.
            raise fast_error from None


def _compose(
    text: str, loader_class: type[yaml.SafeLoader] | type[yaml.CSafeLoader], construct: bool
) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if construct and node is not None else None
    finally:
        loader.dispose()


def parse_yaml(text: str, shown: str) -> Document:
    """Parse YAML text; a syntax error becomes a problem on the line where YAML noticed it."""
    try:
        node, data = compose(text)
    except (RecursionError, ValueError) as exc:
        return Document(problems=[unreadable(exc, shown, None, "YAML")])
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and (mark is None or mark.line >= text.count("\n")):
            # At the end of the file YAML notices only that something was left open; the
            # place where it was opened is the line to look at.
            mark = exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = exc.problem or exc.context or _("invalid YAML")
        if exc.context and exc.problem:
            what = f"{exc.context}, {exc.problem}"
        return Document(
            problems=[
                Problem(
                    shown,
                    line,
                    _("YAML syntax error: {error}").format(error=what),
                    _(
                        "check the indentation and quoting on this line and the one above; quote "
                        "values that contain `: ` or `#`, or start with `*`, `&`, `!`, `[` or `{{`"
                    ).format(),
                )
            ]
        )
    except yaml.YAMLError as exc:
        return Document(
            problems=[
                Problem(shown, None, _("YAML error: {error}").format(error=exc), _("fix the YAML"))
            ]
        )
    locator = Locator.from_yaml(node)
    problems = [
        Problem(
            shown,
            dup.line,
            _(
                "key `{key}` is written twice in the same mapping (also on line {line}); only "
                "the last value would be kept"
            ).format(key=dup.path[-1], line=dup.first_line),
            _("delete one of the two"),
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
    except (RecursionError, ValueError) as exc:
        return Document(problems=[unreadable(exc, shown, None, "JSON")])
    try:
        locator = Locator.from_yaml(compose(text, construct=False)[0])
    except (yaml.YAMLError, RecursionError):
        # Valid JSON that YAML rejects (tabs used as indentation): the data is fine, only the
        # line numbers are lost.
        locator = Locator()
    return Document(data, locator)


def unreadable(
    exc: RecursionError | ValueError, shown: str, line: int | None, language: str
) -> Problem:
    """Valid syntax Python cannot read: lists or mappings nested deeper than its stack
    (``[[[[...]]]]``, a RecursionError), or a number longer than the 4,300 digits it
    converts (a ValueError)."""
    if isinstance(exc, RecursionError):
        return Problem(
            shown,
            line,
            _("{language} error: the file nests lists or mappings too deeply to read").format(
                language=language
            ),
            _("flatten the nesting; a suite needs only a few levels"),
        )
    return Problem(
        shown,
        line,
        _("{language} error: a number has more digits than can be read").format(language=language),
        _("shorten the number, or quote it to keep it as text"),
    )


def json_problem(exc: json.JSONDecodeError, shown: str, line: int) -> Problem:
    """A JSON syntax error as a problem on ``line``."""
    return Problem(
        shown,
        line,
        _("invalid JSON: {error} (column {column})").format(error=exc.msg, column=exc.colno),
        _(
            "check for a missing comma or quote, a trailing comma, or single quotes (JSON "
            "needs double quotes)"
        ),
    )
