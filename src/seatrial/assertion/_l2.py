"""L2 text assertions on the agent's replies (promptfoo's names and spellings).

Search checks (``contains``, ``regex`` and their kin) read the target as one text: the final
reply, or every reply joined by newlines. Shape checks (``equals``, ``starts_with``, ``is_json``,
``json_schema``, ``length``) hold for each targeted reply.

A suite written for promptfoo gets promptfoo's verdicts: values are read as promptfoo reads them
(numbers as JavaScript prints them, comma-separated strings by its CSV rules, schema formats as
ajv-formats checks them); docs/cases.md lists where Seatrial decides otherwise on purpose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import jsonschema
from pydantic import Field, field_validator, model_validator

from seatrial.assertion._common import Target, mismatch, replies, short
from seatrial.assertion._json_formats import FORMAT_CHECKER
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.assertion._values import Schema, Text, TextList, check_schema, js_number_text
from seatrial.i18n import english


class TextParams(AssertionParams):
    """Parameters every text assertion shares."""

    target: Target = "final_response"
    """``final_response`` (the last reply) or ``all_responses`` (every reply)."""


class ValueParams(TextParams):
    """Parameters of ``contains``, ``not_contains``, ``icontains`` and ``starts_with``."""

    value: Text = Field(min_length=1)
    """The text to look for."""


class ValuesParams(TextParams):
    """Parameters of ``contains_any``, ``contains_all`` and their ``icontains`` forms."""

    value: TextList = Field(min_length=1)
    """The texts to look for: a list, or one comma-separated string (promptfoo's CSV rules)."""


class EqualsParams(TextParams):
    """Parameters of ``equals`` and ``not_equals``."""

    value: Any
    """The exact reply; a mapping, list or null is compared with the reply parsed as JSON."""


class RegexParams(TextParams):
    """Parameters of ``regex`` and ``not_regex``."""

    value: str = Field(min_length=1)
    """A Python regular expression, searched anywhere in the text (anchor it with ``^``/``$``)."""
    ignore_case: bool = False
    """Match regardless of case."""

    @field_validator("value")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {value!r}: {exc}") from exc
        return value

    def pattern(self) -> re.Pattern[str]:
        """The compiled expression."""
        return re.compile(self.value, re.IGNORECASE if self.ignore_case else 0)


class IsJsonParams(TextParams):
    """Parameters of ``is_json``."""

    value: Schema | None = None
    """Optional JSON schema the parsed reply must meet (a mapping, or YAML/JSON text)."""

    @field_validator("value", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        # promptfoo treats an empty value as "no schema".
        return None if value == "" else value

    @field_validator("value")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | bool | None) -> dict[str, Any] | bool | None:
        if value is not None:
            check_schema(value)
        return value


class JsonSchemaParams(TextParams):
    """Parameters of ``json_schema``."""

    value: Schema
    """The JSON schema the parsed reply must meet (a mapping, or YAML/JSON text)."""

    @field_validator("value")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | bool) -> dict[str, Any] | bool:
        check_schema(value)
        return value


class LengthParams(TextParams):
    """Parameters of ``length``."""

    min: int | None = Field(default=None, ge=0)
    """Fewest characters."""
    max: int | None = Field(default=None, ge=0)
    """Most characters."""

    @model_validator(mode="after")
    def _bounds(self) -> LengthParams:
        if self.min is None and self.max is None:
            raise ValueError("set `min`, `max` or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("`min` must not exceed `max`")
        return self


def _joined(ctx: AssertionContext, target: Target) -> str:
    return "\n".join(replies(ctx, target))


def _what(target: Target) -> str:
    return "the final reply" if target == "final_response" else "the replies"


def _each(
    ctx: AssertionContext, target: Target, problem: Callable[[str], str | None], ok: str
) -> Check:
    texts = replies(ctx, target)
    for index, text in enumerate(texts):
        found = problem(text)
        if found is not None:
            where = "the final reply" if target == "final_response" else f"reply {index + 1}"
            return Check.failed(f"{where}: {found}")
    return Check.passed(ok)


@assertion("contains", level="L2", params=ValueParams, failure_type="format")
def contains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply contains ``value`` (case-sensitive)."""
    text = _joined(ctx, params.target)
    if params.value in text:
        return Check.passed(f"found {short(params.value)} in {_what(params.target)}")
    return Check.failed(f"{short(params.value)} not found in {_what(params.target)}: {short(text)}")


@assertion(
    "not_contains",
    level="L2",
    params=ValueParams,
    failure_type="format",
    aliases=("not-contains",),
)
def not_contains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply does not contain ``value`` (case-sensitive)."""
    text = _joined(ctx, params.target)
    if params.value in text:
        return Check.failed(f"{short(params.value)} found in {_what(params.target)}: {short(text)}")
    return Check.passed(f"{short(params.value)} not found in {_what(params.target)}")


def _lower(text: str) -> str:
    # JavaScript's toLowerCase(), which promptfoo's `i` forms use; casefold() would also
    # equate "ß" with "ss", which promptfoo does not.
    return text.lower()


@assertion("icontains", level="L2", params=ValueParams, failure_type="format")
def icontains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply contains ``value``, ignoring case."""
    text = _joined(ctx, params.target)
    if _lower(params.value) in _lower(text):
        return Check.passed(f"found {short(params.value)} in {_what(params.target)}")
    return Check.failed(f"{short(params.value)} not found in {_what(params.target)}: {short(text)}")


@assertion(
    "not_icontains",
    level="L2",
    params=ValueParams,
    failure_type="format",
    aliases=("not-icontains",),
)
def not_icontains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply does not contain ``value``, ignoring case."""
    text = _joined(ctx, params.target)
    if _lower(params.value) in _lower(text):
        return Check.failed(f"{short(params.value)} found in {_what(params.target)}: {short(text)}")
    return Check.passed(f"{short(params.value)} not found in {_what(params.target)}")


@assertion(
    "contains_any",
    level="L2",
    params=ValuesParams,
    failure_type="format",
    aliases=("contains-any",),
)
def contains_any(params: ValuesParams, ctx: AssertionContext) -> Check:
    """The reply contains at least one of the values."""
    return _any_of(params, ctx, fold=False)


@assertion(
    "icontains_any",
    level="L2",
    params=ValuesParams,
    failure_type="format",
    aliases=("icontains-any",),
)
def icontains_any(params: ValuesParams, ctx: AssertionContext) -> Check:
    """The reply contains at least one of the values, ignoring case."""
    return _any_of(params, ctx, fold=True)


def _any_of(params: ValuesParams, ctx: AssertionContext, *, fold: bool) -> Check:
    text = _joined(ctx, params.target)
    haystack = _lower(text) if fold else text
    for value in params.value:
        if (_lower(value) if fold else value) in haystack:
            return Check.passed(f"found {short(value)} in {_what(params.target)}")
    return Check.failed(
        f"none of {short(params.value)} found in {_what(params.target)}: {short(text)}"
    )


@assertion(
    "contains_all",
    level="L2",
    params=ValuesParams,
    failure_type="format",
    aliases=("contains-all",),
)
def contains_all(params: ValuesParams, ctx: AssertionContext) -> Check:
    """The reply contains every one of the values."""
    return _all_of(params, ctx, fold=False)


@assertion(
    "icontains_all",
    level="L2",
    params=ValuesParams,
    failure_type="format",
    aliases=("icontains-all",),
)
def icontains_all(params: ValuesParams, ctx: AssertionContext) -> Check:
    """The reply contains every one of the values, ignoring case."""
    return _all_of(params, ctx, fold=True)


def _all_of(params: ValuesParams, ctx: AssertionContext, *, fold: bool) -> Check:
    text = _joined(ctx, params.target)
    haystack = _lower(text) if fold else text
    missing = [v for v in params.value if (_lower(v) if fold else v) not in haystack]
    if missing:
        return Check.failed(f"{short(missing)} not found in {_what(params.target)}: {short(text)}")
    return Check.passed(f"all {len(params.value)} values found in {_what(params.target)}")


def _expected_text(value: Any) -> str:
    # What promptfoo's String(value) gives for a YAML scalar: `true`, `1` for 1.0.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_text(value)
    return str(value)


def _inequality(expected: Any, text: str) -> str | None:
    """How the reply differs from ``expected``; None when it equals it."""
    if expected is None or isinstance(expected, dict | list):
        try:
            parsed = json.loads(text)
        except ValueError:
            return f"is not JSON: {short(text)}"
        if expected is None:
            return None if parsed is None else f"is {short(text)}, expected JSON null"
        found = mismatch(expected, parsed, exact=True)
        return None if found is None else english(found)
    wanted = _expected_text(expected)
    if text == wanted:
        return None
    return f"is {short(text)}, expected {short(wanted)}"


@assertion("equals", level="L2", params=EqualsParams, failure_type="format")
def equals(params: EqualsParams, ctx: AssertionContext) -> Check:
    """The reply is exactly ``value`` (a mapping or list: the reply parsed as JSON equals it)."""
    return _each(
        ctx,
        params.target,
        lambda text: _inequality(params.value, text),
        f"equals {short(params.value)}",
    )


@assertion(
    "not_equals",
    level="L2",
    params=EqualsParams,
    failure_type="format",
    aliases=("not-equals",),
)
def not_equals(params: EqualsParams, ctx: AssertionContext) -> Check:
    """The reply is anything but ``value`` (a mapping or list: compared as parsed JSON)."""

    def problem(text: str) -> str | None:
        if _inequality(params.value, text) is None:
            return f"equals {short(params.value)}"
        return None

    return _each(ctx, params.target, problem, f"differs from {short(params.value)}")


@assertion(
    "starts_with",
    level="L2",
    params=ValueParams,
    failure_type="format",
    aliases=("starts-with",),
)
def starts_with(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply starts with ``value``."""

    def problem(text: str) -> str | None:
        if text.startswith(params.value):
            return None
        return f"starts {short(text[: len(params.value) + 10])}, expected {short(params.value)}"

    return _each(ctx, params.target, problem, f"starts with {short(params.value)}")


@assertion("regex", level="L2", params=RegexParams, failure_type="format")
def regex(params: RegexParams, ctx: AssertionContext) -> Check:
    """The regular expression matches somewhere in the reply."""
    text = _joined(ctx, params.target)
    found = params.pattern().search(text)
    if found:
        return Check.passed(f"/{params.value}/ matched {short(found.group(0))}")
    return Check.failed(f"/{params.value}/ does not match {_what(params.target)}: {short(text)}")


@assertion(
    "not_regex", level="L2", params=RegexParams, failure_type="format", aliases=("not-regex",)
)
def not_regex(params: RegexParams, ctx: AssertionContext) -> Check:
    """The regular expression matches nowhere in the reply."""
    text = _joined(ctx, params.target)
    found = params.pattern().search(text)
    if found:
        return Check.failed(f"/{params.value}/ matched {short(found.group(0))}")
    return Check.passed(f"/{params.value}/ matches nowhere in {_what(params.target)}")


def _schema_problem(schema: dict[str, Any] | bool | None, text: str) -> str | None:
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        return f"is not JSON ({exc}): {short(text)}"
    if schema is None:
        return None
    kind = jsonschema.validators.validator_for(schema)
    validator = kind(schema, format_checker=FORMAT_CHECKER)
    # In schema order, as ajv reports them, so the first named is the one promptfoo names.
    errors = list(validator.iter_errors(parsed))
    if not errors:
        return None
    shown = []
    for error in errors[:3]:
        where = ".".join(str(part) for part in error.absolute_path)
        shown.append(str(error.message) + (f" at `{where}`" if where else ""))
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "does not meet the schema: " + "; ".join(shown) + more


@assertion("is_json", level="L2", params=IsJsonParams, failure_type="format", aliases=("is-json",))
def is_json(params: IsJsonParams, ctx: AssertionContext) -> Check:
    """The reply is valid JSON (meeting the schema in ``value``, when given)."""
    ok = "is JSON" + (" meeting the schema" if params.value is not None else "")
    return _each(ctx, params.target, lambda text: _schema_problem(params.value, text), ok)


@assertion(
    "json_schema",
    level="L2",
    params=JsonSchemaParams,
    failure_type="format",
    aliases=("json-schema",),
)
def json_schema(params: JsonSchemaParams, ctx: AssertionContext) -> Check:
    """The reply is JSON that meets the schema in ``value``."""
    return _each(
        ctx, params.target, lambda text: _schema_problem(params.value, text), "meets the schema"
    )


@assertion("length", level="L2", params=LengthParams, failure_type="format")
def length(params: LengthParams, ctx: AssertionContext) -> Check:
    """The reply has between ``min`` and ``max`` characters."""

    def problem(text: str) -> str | None:
        size = len(text)
        if params.min is not None and size < params.min:
            return f"has {size} characters, fewer than {params.min}"
        if params.max is not None and size > params.max:
            return f"has {size} characters, more than {params.max}"
        return None

    bounds = f"{params.min or 0}..{'∞' if params.max is None else params.max}"
    return _each(ctx, params.target, problem, f"length within {bounds} characters")
