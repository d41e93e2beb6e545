"""Helpers the assertion types share: name lists, reply selection, structural matching."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from seatrial.assertion._registry import AssertionContext
from seatrial.i18n import Message, phrased, phrased_plural
from seatrial.trace import TraceToolCall

Target = Literal["final_response", "all_responses"]
NameMatch = Literal["exact", "prefix"]


def _one_or_many(value: Any) -> Any:
    # YAML authors write `expected: create_order` as often as `expected: [create_order]`.
    return [value] if isinstance(value, str) else value


Names = Annotated[list[str], BeforeValidator(_one_or_many)]
"""A tool name or a list of them, always held as a list."""


def name_matches(name: str, wanted: str, match: NameMatch) -> bool:
    """Whether a called tool's ``name`` is the ``wanted`` one (exactly or by prefix)."""
    return name.startswith(wanted) if match == "prefix" else name == wanted


def called_names(calls: Iterable[TraceToolCall]) -> Message:
    """The tools called, in order, for a reason ("none" when nothing was called)."""
    names = [call.name for call in calls]
    return phrased("{names}", names=", ".join(names)) if names else phrased("none")


def with_called(reason: Message, calls: Iterable[TraceToolCall]) -> Message:
    """``reason`` followed by the tools called, for a check that misses a call:
    "`refund` was never called (tools called: search, send_sms)"."""
    return phrased("{reason} (tools called: {called})", reason=reason, called=called_names(calls))


def times(count: int) -> Message:
    """``once``, ``2 times``, ``0 times``."""
    return phrased_plural("once", "{n} times", count)


def each(items: list[Message]) -> Message:
    """Several findings, one after another ("; " between them in English)."""
    return items[0] if len(items) == 1 else phrased("{items}", items=items)


def enumerated(items: list[Message]) -> Message:
    """Items of one list in a sentence: "a, b, c" (in Chinese "a、b、c")."""
    said = items[0]
    for item in items[1:]:
        said = phrased("{items}, {item}", items=said, item=item)
    return said


def schema_error(message: str, where: str) -> Message:
    """A JSON schema validator's ``message`` (its own English), at the path ``where``."""
    if where:
        return phrased("{error} at `{where}`", error=message, where=where)
    return phrased("{error}", error=message)


def replies(ctx: AssertionContext, target: Target) -> list[str]:
    """The replies a text check reads: the last one, or every one in turn order."""
    if target == "final_response":
        return [ctx.response]
    return list(ctx.responses) if ctx.responses else [ctx.response]


def as_text(value: Any) -> str:
    """Strings as they are; anything else as compact JSON (so YAML ``true`` reads ``true``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


_REASON_JSON = json.JSONEncoder(ensure_ascii=False, default=str)


def short(value: Any, limit: int = 80) -> str:
    """A value shown in a reason, cut to ``limit`` characters."""
    text = _REASON_JSON.encode(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same_scalar(expected: Any, actual: Any) -> bool:
    # True == 1 in Python, but an agent that sends 1 for a boolean flag sent the wrong thing.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


_SCALARS = frozenset((str, int, float))
"""Types whose equal values of the same type always match (bool is left to _same_scalar)."""


def _label(where: str) -> Message:
    return phrased("`{where}`", where=where) if where else phrased("the value")


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def mismatch(expected: Any, actual: Any, *, exact: bool, where: str = "") -> Message | None:
    """The first difference between ``expected`` and ``actual``, or None when they match.

    Mappings match when every expected key matches (``exact`` also forbids extra keys); lists
    match item by item and must have the same length; other values must be equal.
    """
    if type(expected) is dict or isinstance(expected, Mapping):
        if not (type(actual) is dict or isinstance(actual, Mapping)):
            return phrased(
                "{where}: expected an object, got {actual}",
                where=_label(where),
                actual=short(actual),
            )
        for key, want in expected.items():
            if key not in actual:
                return phrased("`{where}` is missing", where=_join(where, key))
            got = actual[key]
            if type(want) in _SCALARS and type(got) is type(want) and want == got:
                continue  # the usual case, an equal scalar: no path to spell out
            found = mismatch(want, got, exact=exact, where=_join(where, key))
            if found:
                return found
        if exact:
            extra = [key for key in actual if key not in expected]
            if extra:
                return phrased("`{where}` was not expected", where=_join(where, extra[0]))
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return phrased(
                "{where}: expected a list, got {actual}", where=_label(where), actual=short(actual)
            )
        if len(actual) != len(expected):
            return phrased(
                "{where} has {count} items, expected {expected}",
                where=_label(where),
                count=len(actual),
                expected=len(expected),
            )
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = mismatch(want, got, exact=exact, where=f"{where}[{index}]")
            if found:
                return found
        return None
    if _same_scalar(expected, actual):
        return None
    return phrased(
        "{where}: expected {expected}, got {actual}",
        where=_label(where),
        expected=short(expected),
        actual=short(actual),
    )
