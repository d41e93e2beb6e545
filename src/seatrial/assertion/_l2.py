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
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any

import jsonschema
import yaml
from jsonschema.exceptions import SchemaError
from pydantic import BeforeValidator, Field, field_validator, model_validator

from seatrial.assertion._common import Target, mismatch, replies, short
from seatrial.assertion._json_formats import FORMAT_CHECKER, KNOWN_FORMATS, named_formats
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion

# JavaScript's \s and String.prototype.trim(): promptfoo splits and trims with these, which
# differ from str.isspace() (U+FEFF is one; U+001C..U+001F and U+0085 are not).
_JS_SPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
    + "".join(chr(code) for code in range(0x2000, 0x200B))
)


def js_number_text(value: int | float) -> str:
    """A number as JavaScript's ``String(n)`` writes it (``1.0`` is ``1``, ``1e21`` is ``1e+21``).

    promptfoo compares numbers in ``value`` as that text, so ``value: 1.0`` must look for "1".
    """
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        raise ValueError("`value` is NaN, which matches nothing: write the text to look for")
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)  # finite, checked above
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # the value is 0.<digits> x 10^point
    if len(digits) <= point <= 21:
        text = digits + "0" * (point - len(digits))
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        text = f"{mantissa}e{'+' if point > 0 else '-'}{abs(point - 1)}"
    return ("-" if sign else "") + text


def _scalar_text(value: Any) -> Any:
    # `value: 42` in YAML is a number; the reply is text.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return js_number_text(value)
    return value


def _skip_spaces(text: str, index: int) -> int:
    while index < len(text) and text[index] in _JS_SPACE:
        index += 1
    return index


def _quoted_value(text: str, start: int) -> tuple[str, int]:
    """The value quoted at ``start`` and the index after its closing quote."""
    out: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        following = text[index + 1] if index + 1 < len(text) else ""
        if char == "\\" and following in ('"', "\\"):
            out.append(following)
            index += 2
        elif char == '"' and following == '"':
            out.append('"')
            index += 2
        elif char == '"':
            return "".join(out), index + 1
        else:
            out.append(char)
            index += 1
    raise ValueError(
        f"the quoted value that starts at character {start + 1} of {short(text)} is never "
        'closed: add the closing `"`, or write `value` as a YAML list'
    )


def split_values(text: str) -> list[str]:
    """Split one comma-separated ``value`` string as promptfoo does.

    Values are separated by commas; spaces around them are trimmed and empty ones dropped. A
    value in double quotes keeps its commas and spaces; inside it ``""`` and ``\\"`` are a
    quote and ``\\\\`` a backslash; ``""`` alone is the empty text. A quote never closed, or text
    after a closing quote before the next comma, is an error.
    """
    values: list[str] = []
    index = 0
    while True:
        while index < len(text) and (text[index] in _JS_SPACE or text[index] == ","):
            index += 1
        if index >= len(text):
            return values
        if text[index] == '"':
            value, after = _quoted_value(text, index)
            index = _skip_spaces(text, after)
            if index < len(text) and text[index] != ",":
                raise ValueError(
                    f"{short(text)} has {short(text[index:], 20)} after the closing quote of "
                    f"{short(value)}: put a comma between values, or write `value` as a YAML list"
                )
        else:
            end = text.find(",", index)
            end = len(text) if end < 0 else end
            value = text[index:end].strip("".join(_JS_SPACE))
            index = end
        values.append(value)


def _text_list(value: Any) -> Any:
    # promptfoo accepts a comma-separated string as well as a list.
    if isinstance(value, str):
        values = split_values(value)
        if not values:
            raise ValueError(f"{short(value)} names no text to look for: give at least one value")
        return values
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [js_number_text(value)]
    if isinstance(value, list):
        return [_scalar_text(item) for item in value]
    return value


Text = Annotated[str, BeforeValidator(_scalar_text)]
TextList = Annotated[list[str], BeforeValidator(_text_list)]


def _schema(value: Any) -> Any:
    # promptfoo also takes the schema as YAML (or JSON) text.
    if isinstance(value, str):
        if value.startswith("file://"):
            raise ValueError(
                "Seatrial does not read a schema from a `file://` reference: write the schema "
                "under `value` (YAML), or load it in a plugin assertion"
            )
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(f"`value` is text but not a YAML or JSON schema: {exc}") from exc
    return value


def _check_schema(schema: dict[str, Any] | bool) -> None:
    try:
        # A bare true/false is a valid schema (everything / nothing); the stubs say mapping.
        jsonschema.validators.validator_for(schema).check_schema(schema)  # type: ignore[arg-type]
    except SchemaError as exc:
        raise ValueError(f"invalid JSON schema: {exc.message}") from exc
    unknown = sorted(set(named_formats(schema)) - KNOWN_FORMATS)
    if unknown:
        raise ValueError(
            f"the schema names the format {', '.join(map(repr, unknown))}, which Seatrial "
            "cannot check (nor can promptfoo): use one of " + ", ".join(sorted(KNOWN_FORMATS))
        )


Schema = Annotated[dict[str, Any] | bool, BeforeValidator(_schema)]


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
            _check_schema(value)
        return value


class JsonSchemaParams(TextParams):
    """Parameters of ``json_schema``."""

    value: Schema
    """The JSON schema the parsed reply must meet (a mapping, or YAML/JSON text)."""

    @field_validator("value")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | bool) -> dict[str, Any] | bool:
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
        return mismatch(expected, parsed, exact=True)
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
