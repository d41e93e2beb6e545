"""Turning pydantic validation errors into plain messages, each with a concrete fix.

Messages name the field the way the user wrote it (``limits.tool_calls``, ``turns[1]``),
say what it must be in words derived from the model itself, show what was written, and for
an unknown key suggest the closest known one.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from seatrial.i18n import N_
from seatrial.i18n import gettext as _

_TYPE_ERRORS_WITHOUT_DESCRIPTION = {"value_error", "assertion_error"}

NOUNS = {"field": N_("field"), "parameter": N_("parameter"), "key": N_("key")}
"""What an unknown key is called, by the ``noun`` a caller gives; another noun is shown as
given."""

INPUT_AND_TURNS = N_("a case has either `input` or `turns`, not both")
"""A case's model error (``seatrial.case._model``), whose fix :func:`explain` knows."""
NO_INPUT = N_("a case needs `input` (one message) or `turns` (a list of messages)")
"""A case's model error (``seatrial.case._model``), whose fix :func:`explain` knows."""
SIMULATED_WITH_INPUT = N_(
    "a case with `user_simulator` has no `input` or `turns`: the simulator writes the user's "
    "messages (give `user_simulator.opening` for a fixed first one)"
)
"""A case's model error (``seatrial.case._model``), whose fix :func:`explain` knows."""


@dataclass(frozen=True)
class Explained:
    """One validation error in words: what is wrong and what to do."""

    loc: tuple[str | int, ...]
    message: str
    fix: str


def dotted(loc: Iterable[str | int]) -> str:
    """``('turns', 1, 'content')`` -> ``turns[1].content``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def suggest(word: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known word closest to a misspelt one, if any is close enough."""
    matches = difflib.get_close_matches(word, sorted(set(known)), n=1, cutoff=cutoff)
    return matches[0] if matches else None


def shown_value(value: Any) -> str:
    """A value as the user would recognise it, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def explain(
    error: ErrorDetails,
    model: type[BaseModel],
    *,
    noun: str = "field",
    also_known: Iterable[str] = (),
    hide_value: bool = False,
) -> Explained:
    """Explain one pydantic error raised while validating ``model``.

    ``also_known`` are keys accepted beside the model's own fields (aliases, common keys),
    offered as suggestions for an unknown key. ``hide_value`` keeps the written value out of
    the message (secrets).
    """
    loc = tuple(error["loc"])
    name = dotted(loc)
    kind = error["type"]
    annotation, info = _annotation_at(model, loc)
    if kind == "extra_forbidden":
        return _unknown_key(loc, model, noun, also_known)
    if kind == "missing":
        example = _example(annotation, info)
        return Explained(
            loc,
            _("`{name}` is required").format(name=name),
            _("add `{key}: {example}`").format(key=loc[-1], example=example),
        )
    if kind in _TYPE_ERRORS_WITHOUT_DESCRIPTION:
        reason = str(error.get("ctx", {}).get("error", error["msg"]))
        message = _("`{name}`: {reason}").format(name=name, reason=reason) if name else reason
        return Explained(loc, message, _fix_for_reason(name, reason))
    got = None if hide_value else shown_value(error["input"])
    description = _describe(annotation, info) if annotation is not None else None
    if description is None:
        said = error["msg"].lower()
        return Explained(
            loc,
            _("`{name}` is invalid: {error}").format(name=name, error=said)
            if got is None
            else _("`{name}` is invalid: {error}, got {value}").format(
                name=name, error=said, value=got
            ),
            _("change `{name}` ({error})").format(name=name, error=said),
        )
    example = _example(annotation, info)
    return Explained(
        loc,
        _("`{name}` must be {description}").format(name=name, description=description)
        if got is None
        else _("`{name}` must be {description}, got {value}").format(
            name=name, description=description, value=got
        ),
        _("write {description}, e.g. `{key}: {example}`").format(
            description=description, key=loc[-1], example=example
        )
        if isinstance(loc[-1], str)
        else _("write {description}, e.g. `{example}`").format(
            description=description, example=example
        ),
    )


def _unknown_key(
    loc: tuple[str | int, ...], model: type[BaseModel], noun: str, also_known: Iterable[str]
) -> Explained:
    key = str(loc[-1])
    owner, _info = _annotation_at(model, loc[:-1])
    owner = owner if isinstance(owner, type) and issubclass(owner, BaseModel) else model
    known = [*_keys(owner), *also_known] if owner is model else [*_keys(owner)]
    close = suggest(key, known)
    said = _(NOUNS[noun]) if noun in NOUNS else noun
    if len(loc) > 1:
        unknown = _("unknown {noun} `{key}` in `{parent}`").format(
            noun=said, key=key, parent=dotted(loc[:-1])
        )
    else:
        unknown = _("unknown {noun} `{key}`").format(noun=said, key=key)
    if close is not None:
        return Explained(
            loc,
            _("{unknown}; did you mean `{close}`?").format(unknown=unknown, close=close),
            _("rename it to `{close}`").format(close=close),
        )
    return Explained(
        loc,
        unknown,
        _("remove it, or use one of: {keys}").format(keys=", ".join(sorted(known))),
    )


def _keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _field(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _fix_for_reason(name: str, reason: str) -> str:
    if reason == _(SIMULATED_WITH_INPUT):
        return _("remove `input` and `turns`, or remove `user_simulator`")
    if reason == _(INPUT_AND_TURNS):
        return _("keep `input` for a one-message case or `turns` for a conversation, not both")
    if "`input`" in reason:
        return _("add `input: <the user's message>` or `turns: [<message>, ...]`")
    if name:
        return _("change `{name}` so that it satisfies: {reason}").format(name=name, reason=reason)
    return _("change the value so that it satisfies: {reason}").format(reason=reason)


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def _annotation_at(
    model: type[BaseModel], loc: tuple[str | int, ...]
) -> tuple[Any, FieldInfo | None]:
    """The declared type (and field) reached by following ``loc`` from ``model``."""
    current: Any = model
    info: FieldInfo | None = None
    for part in loc:
        current = _unwrap_optional(current)
        origin = get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            info = _field(current, part)
            if info is None:
                return None, None
            current = info.annotation
        elif origin is list and isinstance(part, int):
            current, info = get_args(current)[0], None
        elif origin is dict:
            current, info = get_args(current)[1], None
        else:
            return None, None
    return _unwrap_optional(current), info


def _bounds(info: FieldInfo | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in info.metadata if info is not None else []:
        for key in ("ge", "gt", "le", "lt", "min_length"):
            if isinstance(item, annotated_types.BaseMetadata) and hasattr(item, key):
                found[key] = getattr(item, key)
    return found


def _number_words(noun: str, bounds: dict[str, Any]) -> str:
    def plain(number: Any) -> str:
        return str(int(number)) if float(number).is_integer() else str(number)

    whole = noun == "a whole number"
    if "ge" in bounds and "le" in bounds:
        low, high = plain(bounds["ge"]), plain(bounds["le"])
        if whole:
            return _("a whole number from {low} to {high}").format(low=low, high=high)
        return _("a number from {low} to {high}").format(low=low, high=high)
    parts = []
    for key, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if key in bounds:
            parts.append(f"{sign} {plain(bounds[key])}")
    said = _("a whole number") if whole else _("a number")
    if not parts:
        return said
    return _("{number} {bounds}").format(number=said, bounds=" ".join(parts))


def _describe(annotation: Any, info: FieldInfo | None) -> str | None:
    bounds = _bounds(info)
    if annotation is bool:
        return _("true or false")
    if annotation is int:
        return _number_words("a whole number", bounds)
    if annotation is float:
        return _number_words("a number", bounds)
    if annotation is str:
        return _("non-empty text") if bounds.get("min_length") else _("text")
    origin = get_origin(annotation)
    if origin is Literal:
        listed = ", ".join(str(v) for v in get_args(annotation))
        return _("one of {values}").format(values=listed)
    if origin is list:
        inner = _describe(_unwrap_optional(get_args(annotation)[0]), None)
        return _("a list of {items}").format(items=_plural(inner)) if inner else _("a list")
    if origin is dict or annotation is dict:
        return _("a mapping (key: value)")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _("a mapping with the keys {keys}").format(keys=", ".join(_keys(annotation)))
    return None


def _plural(description: str) -> str:
    """The items of a list, said from one item's description: in English the plural
    (``texts``, ``mappings with ...``); a translation's description is its own plural."""
    if description == "text":
        return "texts"
    if description.startswith("a mapping"):
        return "mappings" + description.removeprefix("a mapping")
    return description.removeprefix("a ").removeprefix("one of ")


def _example(annotation: Any, info: FieldInfo | None) -> str:
    bounds = _bounds(info)
    if annotation is bool:
        return "true"
    if annotation is int:
        return "3" if bounds.get("le", 3) >= 3 else str(bounds["le"])
    if annotation is float:
        return "0.8" if bounds.get("le", 2) <= 1 else "1.5"
    origin = get_origin(annotation)
    if origin is Literal:
        return str(get_args(annotation)[0])
    if origin is list:
        return "[...]"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "{...}"
    return "..."
