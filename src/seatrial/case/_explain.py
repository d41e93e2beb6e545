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

_TYPE_ERRORS_WITHOUT_DESCRIPTION = {"value_error", "assertion_error"}


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
        return Explained(loc, f"`{name}` is required", f"add `{loc[-1]}: {example}`")
    if kind in _TYPE_ERRORS_WITHOUT_DESCRIPTION:
        reason = str(error.get("ctx", {}).get("error", error["msg"]))
        where = f"`{name}`: " if name else ""
        return Explained(loc, f"{where}{reason}", _fix_for_reason(name, reason))
    got = "" if hide_value else f", got {shown_value(error['input'])}"
    description = _describe(annotation, info) if annotation is not None else None
    if description is None:
        return Explained(
            loc,
            f"`{name}` is invalid: {error['msg'].lower()}{got}",
            f"change `{name}` ({error['msg'].lower()})",
        )
    example = _example(annotation, info)
    return Explained(
        loc,
        f"`{name}` must be {description}{got}",
        f"write {description}, e.g. `{loc[-1]}: {example}`"
        if isinstance(loc[-1], str)
        else f"write {description}, e.g. `{example}`",
    )


def _unknown_key(
    loc: tuple[str | int, ...], model: type[BaseModel], noun: str, also_known: Iterable[str]
) -> Explained:
    key = str(loc[-1])
    owner, _ = _annotation_at(model, loc[:-1])
    owner = owner if isinstance(owner, type) and issubclass(owner, BaseModel) else model
    known = [*_keys(owner), *also_known] if owner is model else [*_keys(owner)]
    close = suggest(key, known)
    where = f" in `{dotted(loc[:-1])}`" if len(loc) > 1 else ""
    if close is not None:
        return Explained(
            loc,
            f"unknown {noun} `{key}`{where}; did you mean `{close}`?",
            f"rename it to `{close}`",
        )
    return Explained(
        loc,
        f"unknown {noun} `{key}`{where}",
        f"remove it, or use one of: {', '.join(sorted(known))}",
    )


def _keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _field(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _fix_for_reason(name: str, reason: str) -> str:
    if "`input`" in reason and "not both" in reason:
        return "keep `input` for a one-message case or `turns` for a conversation, not both"
    if "`input`" in reason:
        return "add `input: <the user's message>` or `turns: [<message>, ...]`"
    target = f"`{name}`" if name else "the value"
    return f"change {target} so that it satisfies: {reason}"


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

    if "ge" in bounds and "le" in bounds:
        return f"{noun} from {plain(bounds['ge'])} to {plain(bounds['le'])}"
    parts = [noun]
    for key, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if key in bounds:
            parts.append(f"{sign} {plain(bounds[key])}")
    return " ".join(parts)


def _describe(annotation: Any, info: FieldInfo | None) -> str | None:
    bounds = _bounds(info)
    if annotation is bool:
        return "true or false"
    if annotation is int:
        return _number_words("a whole number", bounds)
    if annotation is float:
        return _number_words("a number", bounds)
    if annotation is str:
        return "non-empty text" if bounds.get("min_length") else "text"
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(str(v) for v in get_args(annotation))
    if origin is list:
        inner = _describe(_unwrap_optional(get_args(annotation)[0]), None)
        return f"a list of {_plural(inner)}" if inner else "a list"
    if origin is dict or annotation is dict:
        return "a mapping (key: value)"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "a mapping with the keys " + ", ".join(_keys(annotation))
    return None


def _plural(description: str | None) -> str:
    if description == "text":
        return "texts"
    if description is not None and description.startswith("a mapping"):
        return "mappings" + description.removeprefix("a mapping")
    return (description or "items").removeprefix("a ").removeprefix("one of ")


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
