"""L2 text assertions on the agent's replies (promptfoo's names and spellings).

Search checks (``contains``, ``regex`` and their kin) read the target as one text: the final
reply, or every reply joined by newlines. Shape checks (``equals``, ``starts_with``, ``is_json``,
``json_schema``, ``length``) hold for each targeted reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any

import jsonschema
from jsonschema.exceptions import SchemaError
from pydantic import BeforeValidator, Field, field_validator, model_validator

from seatrial.assertion._common import Target, mismatch, replies, short
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion


def _scalar_text(value: Any) -> Any:
    # `value: 42` in YAML is a number; the reply is text.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _text_list(value: Any) -> Any:
    # promptfoo accepts a comma-separated string as well as a list.
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [_scalar_text(item) for item in value]
    return value


Text = Annotated[str, BeforeValidator(_scalar_text)]
TextList = Annotated[list[str], BeforeValidator(_text_list)]


def _check_schema(schema: dict[str, Any]) -> None:
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"invalid JSON schema: {exc.message}") from exc


class TextParams(AssertionParams):
    """Parameters every text assertion shares."""

    target: Target = "final_response"
    """``final_response`` (the last reply) or ``all_responses`` (every reply)."""


class ValueParams(TextParams):
    """Parameters of ``contains``, ``not_contains``, ``icontains`` and ``starts_with``."""

    value: Text = Field(min_length=1)
    """The text to look for."""


class ValuesParams(TextParams):
    """Parameters of ``contains_any`` and ``contains_all``."""

    value: TextList = Field(min_length=1)
    """The texts to look for (a list, or one comma-separated string)."""


class EqualsParams(TextParams):
    """Parameters of ``equals``."""

    value: Any
    """The exact reply; a mapping or list is compared with the reply parsed as JSON."""


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

    value: dict[str, Any] | None = None
    """Optional JSON schema the parsed reply must meet."""

    @field_validator("value")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            _check_schema(value)
        return value


class JsonSchemaParams(TextParams):
    """Parameters of ``json_schema``."""

    value: dict[str, Any]
    """The JSON schema the parsed reply must meet."""

    @field_validator("value")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        _check_schema(value)
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


@assertion("icontains", level="L2", params=ValueParams, failure_type="format")
def icontains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply contains ``value``, ignoring case."""
    text = _joined(ctx, params.target)
    if params.value.casefold() in text.casefold():
        return Check.passed(f"found {short(params.value)} in {_what(params.target)}")
    return Check.failed(f"{short(params.value)} not found in {_what(params.target)}: {short(text)}")


@assertion(
    "contains_any",
    level="L2",
    params=ValuesParams,
    failure_type="format",
    aliases=("contains-any",),
)
def contains_any(params: ValuesParams, ctx: AssertionContext) -> Check:
    """The reply contains at least one of the values."""
    text = _joined(ctx, params.target)
    found = [value for value in params.value if value in text]
    if found:
        return Check.passed(f"found {short(found[0])} in {_what(params.target)}")
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
    text = _joined(ctx, params.target)
    missing = [value for value in params.value if value not in text]
    if missing:
        return Check.failed(f"{short(missing)} not found in {_what(params.target)}: {short(text)}")
    return Check.passed(f"all {len(params.value)} values found in {_what(params.target)}")


@assertion("equals", level="L2", params=EqualsParams, failure_type="format")
def equals(params: EqualsParams, ctx: AssertionContext) -> Check:
    """The reply is exactly ``value`` (a mapping or list: the reply parsed as JSON equals it)."""

    def problem(text: str) -> str | None:
        if isinstance(params.value, dict | list):
            try:
                parsed = json.loads(text)
            except ValueError:
                return f"is not JSON: {short(text)}"
            return mismatch(params.value, parsed, exact=True)
        if text == str(params.value):
            return None
        return f"is {short(text)}, expected {short(str(params.value))}"

    return _each(ctx, params.target, problem, f"equals {short(params.value)}")


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


def _schema_problem(schema: dict[str, Any] | None, text: str) -> str | None:
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        return f"is not JSON ({exc}): {short(text)}"
    if schema is None:
        return None
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(parsed))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    message = str(error.message)
    return "does not meet the schema: " + message + (f" at `{where}`" if where else "")


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
