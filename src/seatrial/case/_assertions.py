"""Checking a case's assertions against the registry: known type, valid parameters."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from seatrial.case._explain import explain, suggest
from seatrial.case._locate import Path_
from seatrial.case._model import AssertionSpec

COMMON_KEYS = tuple(AssertionSpec.model_fields)
"""Keys every assertion accepts; the rest are the type's own parameters."""

Found = tuple[Path_, str, str]


def check_assertions(items: Any) -> list[Found]:
    """Problems with the assertions of one case, as ``(loc, message, fix)`` in the case."""
    if not isinstance(items, list):
        return []  # the case model reports a non-list
    # Imported here: seatrial.assertion imports seatrial.case, so a module-level import
    # would be circular.
    from seatrial import assertion as registry

    found: list[Found] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue  # the case model reports a missing or non-text type
        name = item["type"]
        loc: Path_ = ("assertions", index)
        try:
            kind = registry.lookup(name)
        except KeyError:
            found.append(_unknown_type(loc, name, registry.known_types(), registry.aliases()))
            continue
        params = {key: value for key, value in item.items() if key not in COMMON_KEYS}
        try:
            kind.params.model_validate(params)
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                said = explain(error, kind.params, noun="parameter", also_known=COMMON_KEYS)
                found.append(((*loc, *said.loc), f"assertion `{name}`: {said.message}", said.fix))
    return found


def _unknown_type(loc: Path_, name: str, known: list[str], aliases: dict[str, str]) -> Found:
    close = suggest(name, [*known, *aliases])
    hint = f"; did you mean `{close}`?" if close else ";"
    listed = ", ".join(known) if known else "(none registered)"
    return (
        (*loc, "type"),
        f"unknown assertion type `{name}`{hint} known types: {listed}",
        f"change it to `{close}`"
        if close
        else "use one of the known types, or install the plugin that registers this one",
    )
