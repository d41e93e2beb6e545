"""From a parsed suite file to a validated :class:`Suite`, collecting every problem.

Every reader (YAML, JSON, JSONL, XLSX) produces a :class:`RawSuite`: suite-level keys at the
document root, ``defaults`` at ``("defaults",)``, and cases wherever that format keeps them.
Building is the same for all formats, so every format gets the same checks and messages.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from seatrial.case._assertions import check_assertions
from seatrial.case._explain import INPUT_AND_TURNS, NO_INPUT, explain, suggest
from seatrial.case._gates import GateSpec
from seatrial.case._locate import Locator, Path_
from seatrial.case._model import Case, Gate, Suite
from seatrial.errors import Problem
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

MAPPING_FIELDS = ("context", "limits", "permissions", "metadata")
"""Case fields whose keys are filled one by one from the suite defaults."""

DEFAULTS: Path_ = ("defaults",)


class SuiteHead(BaseModel):
    """The suite-level keys of a suite file (everything but the cases' own fields)."""

    model_config = ConfigDict(extra="forbid")

    suite: str | None = Field(default=None, min_length=1)
    """The suite's name; the file name without its extension when unset."""
    defaults: dict[str, Any] = Field(default_factory=dict)
    """Values for the fields a case leaves unset."""
    cases: list[Any] = Field(default_factory=list)
    """The cases."""
    rubrics: dict[str, str] = Field(default_factory=dict)
    """Success criteria per category, for the LLM judge."""
    gate: Gate = Field(default_factory=Gate)
    """Release gate."""
    agent: str | None = None
    """Default agent spec or name for this suite."""
    gates: list[GateSpec] = Field(default_factory=list)
    """Release gates written before the run."""
    probe: bool = False
    """A probe suite (see :attr:`Suite.probe`)."""
    dataset: str | None = Field(default=None, min_length=1)
    """A golden set whose cases run too (see :attr:`Suite.dataset`)."""


@dataclass
class RawCase:
    """One case as read, before defaults and validation."""

    data: Any
    path: Path_
    """Where the case sits in the document (for line numbers)."""
    label: str | None = None
    """How messages name the case when its id is not enough (``row 7``)."""


@dataclass
class RawSuite:
    """A suite file as read, in the same shape whatever its format."""

    file: Path
    shown: str
    """The path as the user gave it, for messages."""
    head: dict[str, Any]
    cases: list[RawCase]
    locator: Locator
    problems: list[Problem] = field(default_factory=list)
    empty_fix: str = N_("add cases under `cases:`, each with an `id` and an `input`")
    """The fix of a suite with no cases (marked English, translated where it is said; a
    format string, its braces doubled)."""


def build_suite(raw: RawSuite) -> tuple[Suite | None, list[Problem]]:
    """Validate a raw suite; the suite, or None and every problem found."""
    problems = list(raw.problems)
    if _nested_too_deep({key: value for key, value in raw.head.items() if key != "cases"}):
        where = _("the suite (outside its cases)")
        problems.append(_too_deep(raw, where, raw.locator.line(())))
        return None, problems
    head = _check_head(raw, problems)
    defaults = _check_defaults(raw, problems)
    cases: list[Case] = []
    first_line: dict[str, int | None] = {}
    for number, raw_case in enumerate(raw.cases, start=1):
        if _nested_too_deep(raw_case.data):
            line = raw.locator.line((), [raw_case.path])
            what = raw_case.label or _("case {number}").format(number=number)
            problems.append(_too_deep(raw, what, line))
            continue
        case = _build_case(raw, raw_case, number, defaults, problems)
        if case is not None:
            cases.append(case)
        case_id = raw_case.data.get("id") if isinstance(raw_case.data, dict) else None
        if not isinstance(case_id, str) or not case_id:
            continue
        line = raw.locator.line(("id",), [raw_case.path])
        if case_id not in first_line:
            first_line[case_id] = line
            continue
        first = first_line[case_id]
        duplicate = (
            _("duplicate case id `{id}` (first used on row {row})").format(id=case_id, row=first)
            if raw_case.label
            else _("duplicate case id `{id}` (first used on line {line})").format(
                id=case_id, line=first
            )
        )
        problems.append(
            Problem(
                raw.shown,
                line,
                duplicate,
                _("give each case its own `id`; runs are compared case by case through it"),
            )
        )
    if not raw.cases and not problems and head.dataset is None:
        problems.append(
            Problem(
                raw.shown,
                raw.locator.line(("cases",)),
                _("the suite has no cases"),
                _(raw.empty_fix).format(),
            )
        )
    problems = _unique_in_order(problems)
    if problems:
        return None, problems
    return (
        Suite(
            name=head.suite or raw.file.stem,
            path=str(raw.file),
            cases=cases,
            rubrics=head.rubrics,
            gate=head.gate,
            agent=head.agent,
            gates=head.gates,
            probe=head.probe,
            dataset=head.dataset,
        ),
        [],
    )


MAX_NESTING = 100
"""The deepest a suite's lists and mappings may nest. A suite needs a few levels; the store
serializes a case inside its run's records, and pydantic stops at about 250 levels in all."""


def _nested_too_deep(value: Any, levels: int = MAX_NESTING) -> bool:
    """Whether lists and mappings nest more than ``levels`` deep (a cycle does: YAML's
    ``&a [*a]``). A part shared through YAML aliases is walked once per budget, not once
    per reference."""
    checked: dict[int, int] = {}

    def walk(node: Any, left: int) -> bool:
        if not isinstance(node, dict | list):
            return False
        if left == 0:
            return True
        if checked.get(id(node), -1) >= left:
            return False
        children = node.values() if isinstance(node, dict) else node
        if any(walk(child, left - 1) for child in children):
            return True
        checked[id(node)] = left
        return False

    return walk(value, levels + 1)


def _too_deep(raw: RawSuite, what: str, line: int | None) -> Problem:
    return Problem(
        raw.shown,
        line,
        _("{what} nests lists or mappings more than {levels} levels deep").format(
            what=what, levels=MAX_NESTING
        ),
        _("flatten the nesting; a case needs only a few levels"),
    )


def _check_head(raw: RawSuite, problems: list[Problem]) -> SuiteHead:
    try:
        return SuiteHead.model_validate(raw.head)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            said = explain(error, SuiteHead)
            line = raw.locator.line(said.loc)
            problems.append(Problem(raw.shown, line, said.message, said.fix))
    return SuiteHead()


def _check_defaults(raw: RawSuite, problems: list[Problem]) -> dict[str, Any]:
    defaults = raw.head.get("defaults")
    if not isinstance(defaults, dict):
        return {}
    known = [*Case.model_fields, "task"]
    kept: dict[str, Any] = {}
    for key, value in defaults.items():
        line = raw.locator.line((*DEFAULTS, str(key)))
        if key == "id":
            problems.append(
                Problem(
                    raw.shown,
                    line,
                    _("`id` cannot have a default: every case needs its own"),
                    _("remove `id` from `defaults` and give each case an `id`"),
                )
            )
        elif key not in known:
            close = suggest(str(key), known)
            unknown = _("unknown field `{key}` in `defaults`").format(key=key)
            problems.append(
                Problem(
                    raw.shown,
                    line,
                    _("{unknown}; did you mean `{close}`?").format(unknown=unknown, close=close)
                    if close
                    else unknown,
                    _("rename it to `{close}`").format(close=close)
                    if close
                    else _("remove it; `defaults` takes case fields"),
                )
            )
        else:
            kept["input" if key == "task" else key] = value
    return kept


def merge_defaults(data: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The case with unset fields filled from ``defaults``; mapping fields key by key."""
    merged = dict(data)
    if "task" in merged and "input" not in merged:
        merged["input"] = merged.pop("task")
    for key, value in defaults.items():
        if key in ("input", "turns") and ("input" in merged or "turns" in merged):
            # input and turns are one slot: a case with either has set it.
            continue
        if key not in merged:
            merged[key] = copy.deepcopy(value)
        elif key in MAPPING_FIELDS and isinstance(value, dict) and isinstance(merged[key], dict):
            merged[key] = {**copy.deepcopy(value), **merged[key]}
    return merged


def _build_case(
    raw: RawSuite,
    raw_case: RawCase,
    number: int,
    defaults: dict[str, Any],
    problems: list[Problem],
) -> Case | None:
    bases = [raw_case.path, DEFAULTS]
    data = raw_case.data
    if not isinstance(data, dict):
        problems.append(
            Problem(
                raw.shown,
                raw.locator.line((), [raw_case.path]),
                _("case {number} must be a mapping of fields, got {type}").format(
                    number=number, type=type(data).__name__
                ),
                _("write the case as `id: ...`, `input: ...` keys"),
            )
        )
        return None
    case_id = data.get("id")
    wrote_task = "task" in data and "input" not in data
    merged = merge_defaults(data, defaults)
    found: list[tuple[Path_, str, str]] = []
    _resolve_fixture(raw, merged, found)
    has_input, has_turns = merged.get("input") is not None, bool(merged.get("turns"))
    # A simulated user writes the messages: the Case model checks that one has neither.
    if not has_input and not has_turns and merged.get("user_simulator") is None:
        found.append(
            (
                (),
                _("has no `input` or `turns`"),
                _("add `input: <the user's message>` or `turns: [...]`"),
            )
        )
    elif has_input and has_turns:
        found.append(
            (
                ("turns",),
                _("has both `input` and `turns`"),
                _("keep `input` for a one-message case or `turns` for a conversation, not both"),
            )
        )
    case: Case | None = None
    try:
        case = Case.model_validate(merged)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            reason = str(error.get("ctx", {}).get("error", ""))
            if not error["loc"] and reason in (_(NO_INPUT), _(INPUT_AND_TURNS)):
                continue  # already reported above, with a better line
            said = explain(error, Case, also_known=["task"])
            loc, message, fix = said.loc, said.message, said.fix
            if wrote_task and loc[:1] == ("input",):
                loc = ("task", *loc[1:])
                message, fix = (t.replace("`input", "`task") for t in (message, fix))
            found.append((loc, message, fix))
    found.extend(check_assertions(merged.get("assertions")))
    # Named only when something is wrong: a suite of a thousand good cases builds no label.
    label = (raw_case.label or _case_label(case_id, number)) if found else ""
    for loc, message, fix in found:
        line, base = raw.locator.locate(loc, bases)
        # A problem in an inherited default is the same for every case: say it once.
        text = message if base == 1 else _("{case}: {problem}").format(case=label, problem=message)
        problems.append(Problem(raw.shown, line, text, fix))
    return case if not found else None


def _case_label(case_id: Any, number: int) -> str:
    """How a problem names a case: by its id, else by its place in the file."""
    if isinstance(case_id, str):
        return _("case `{id}`").format(id=case_id)
    return _("case {number}").format(number=number)


def _resolve_fixture(
    raw: RawSuite, merged: dict[str, Any], found: list[tuple[Path_, str, str]]
) -> None:
    fixture = merged.get("fixture")
    if not isinstance(fixture, str) or not fixture:
        return
    folder = Path(fixture).expanduser()
    if not folder.is_absolute():
        folder = raw.file.parent / folder
    folder = folder.resolve()
    merged["fixture"] = str(folder)
    if folder.is_dir():
        return
    message = (
        _("fixture folder `{fixture}` is a file, not a folder (looked at {folder})")
        if folder.exists()
        else _("fixture folder `{fixture}` does not exist (looked at {folder})")
    )
    found.append(
        (
            ("fixture",),
            message.format(fixture=fixture, folder=folder),
            _(
                "create the folder or correct the path; a relative path is read from the folder "
                "that holds the suite file"
            ),
        )
    )


def _unique_in_order(problems: list[Problem]) -> list[Problem]:
    unique: list[Problem] = []
    for problem in problems:
        if problem not in unique:
            unique.append(problem)
    return sorted(unique, key=lambda p: p.line or 0)
