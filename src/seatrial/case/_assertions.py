"""Checking assertions against the registry: a known type, valid parameters.

The one place an assertion as written is validated, with one set of messages: the suite
loader reports them at the file and line, :func:`seatrial.assertion.evaluate` (for a case
built in code) and the benchmark importers under the case's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from seatrial.case._explain import explain, suggest
from seatrial.case._locate import Path_
from seatrial.case._model import AssertionSpec
from seatrial.i18n import gettext as _
from seatrial.registry import AssertionParams, AssertionType, aliases, known_types, lookup

COMMON_KEYS = tuple(AssertionSpec.model_fields)
"""Keys every assertion accepts; the rest are the type's own parameters."""

Found = tuple[Path_, str, str]
"""One problem: where in the assertion (or case), the message, and the fix."""


@dataclass(frozen=True)
class CheckedAssertion:
    """One assertion checked: its type and parameters when valid, else every problem."""

    kind: AssertionType | None = None
    params: AssertionParams | None = None
    problems: list[Found] = field(default_factory=list)
    """``(loc, message, fix)``, ``loc`` inside the assertion (``("type",)``, a parameter)."""


def check_assertion(name: str, params: Mapping[str, Any]) -> CheckedAssertion:
    """Check one assertion of type ``name`` (or an alias) with its own ``params``."""
    try:
        kind = lookup(name)
    except KeyError:
        return CheckedAssertion(problems=[_unknown_type(name, known_types(), aliases())])
    try:
        return CheckedAssertion(kind, kind.params.model_validate(dict(params)))
    except ValidationError as exc:
        problems: list[Found] = []
        for error in exc.errors(include_url=False):
            said = explain(error, kind.params, noun="parameter", also_known=COMMON_KEYS)
            message = _("assertion `{type}`: {problem}").format(type=name, problem=said.message)
            problems.append((said.loc, message, said.fix))
        return CheckedAssertion(kind, problems=problems)


def check_assertions(items: Any) -> list[Found]:
    """Problems with the assertions of one case, as ``(loc, message, fix)`` in the case."""
    if not isinstance(items, list):
        return []  # the case model reports a non-list
    found: list[Found] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue  # the case model reports a missing or non-text type
        params = {key: value for key, value in item.items() if key not in COMMON_KEYS}
        checked = check_assertion(item["type"], params)
        found.extend(
            (("assertions", index, *loc), message, fix) for loc, message, fix in checked.problems
        )
    return found


def _unknown_type(name: str, known: list[str], aliases: dict[str, str]) -> Found:
    close = suggest(name, [*known, *aliases])
    listed = ", ".join(known) if known else _("(none registered)")
    return (
        ("type",),
        _("unknown assertion type `{type}`; did you mean `{close}`? known types: {known}").format(
            type=name, close=close, known=listed
        )
        if close
        else _("unknown assertion type `{type}`; known types: {known}").format(
            type=name, known=listed
        ),
        _("change it to `{close}`").format(close=close)
        if close
        else _("use one of the known types, or install the plugin that registers this one"),
    )
