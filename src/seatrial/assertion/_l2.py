"""L2 text assertions on the agent's replies (promptfoo's names and spellings).

Search checks (``contains``, ``regex`` and their kin) read the target as one text: the final
reply, or every reply joined by newlines. Shape checks (``equals``, ``starts_with``, ``is_json``,
``json_schema``, ``length``) hold for each targeted reply; the JSON ones live in :mod:`._l2_json`.

A suite written for promptfoo gets promptfoo's verdicts: values are read as promptfoo reads them
(numbers as JavaScript prints them, comma-separated strings by its CSV rules, schema formats as
ajv-formats checks them); docs/cases.md lists where Seatrial decides otherwise on purpose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import Field, field_validator, model_validator

from seatrial.assertion._common import Target, mismatch, replies, short
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.assertion._values import Text, TextList, js_number_text
from seatrial.i18n import Message, phrased, phrased_plural
from seatrial.i18n import gettext as _


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
            raise ValueError(
                _("invalid regular expression {pattern}: {error}").format(
                    pattern=repr(value), error=exc
                )
            ) from exc
        return value

    def pattern(self) -> re.Pattern[str]:
        """The compiled expression."""
        return re.compile(self.value, re.IGNORECASE if self.ignore_case else 0)


class LengthParams(TextParams):
    """Parameters of ``length``."""

    min: int | None = Field(default=None, ge=0)
    """Fewest characters."""
    max: int | None = Field(default=None, ge=0)
    """Most characters."""

    @model_validator(mode="after")
    def _bounds(self) -> LengthParams:
        if self.min is None and self.max is None:
            raise ValueError(_("set `min`, `max` or both"))
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(_("`min` must not exceed `max`"))
        return self


def _joined(ctx: AssertionContext, target: Target) -> str:
    return "\n".join(replies(ctx, target))


def _what(target: Target) -> Message:
    return phrased("the final reply") if target == "final_response" else phrased("the replies")


def each_reply(
    ctx: AssertionContext, target: Target, problem: Callable[[str], Message | None], ok: Message
) -> Check:
    """A shape check: ``ok`` when ``problem`` finds nothing in any reply, else the first found."""
    texts = replies(ctx, target)
    for index, text in enumerate(texts):
        found = problem(text)
        if found is not None:
            where = (
                _what(target) if target == "final_response" else phrased("reply {n}", n=index + 1)
            )
            return Check.failed(phrased("{where}: {problem}", where=where, problem=found))
    return Check.passed(ok)


def _found(value: str, target: Target) -> Message:
    return phrased("found {value} in {what}", value=short(value), what=_what(target))


def _not_found(value: Any, target: Target, text: str) -> Message:
    return phrased(
        "{value} not found in {what}: {text}",
        value=short(value),
        what=_what(target),
        text=short(text),
    )


@assertion("contains", level="L2", params=ValueParams, failure_type="format")
def contains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply contains ``value`` (case-sensitive)."""
    text = _joined(ctx, params.target)
    if params.value in text:
        return Check.passed(_found(params.value, params.target))
    return Check.failed(_not_found(params.value, params.target, text))


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
        return Check.failed(_found_anyway(params.value, params.target, text))
    return Check.passed(_absent(params.value, params.target))


def _found_anyway(value: str, target: Target, text: str) -> Message:
    return phrased(
        "{value} found in {what}: {text}", value=short(value), what=_what(target), text=short(text)
    )


def _absent(value: str, target: Target) -> Message:
    return phrased("{value} not found in {what}", value=short(value), what=_what(target))


def _lower(text: str) -> str:
    # JavaScript's toLowerCase(), which promptfoo's `i` forms use; casefold() would also
    # equate "ß" with "ss", which promptfoo does not.
    return text.lower()


@assertion("icontains", level="L2", params=ValueParams, failure_type="format")
def icontains(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply contains ``value``, ignoring case."""
    text = _joined(ctx, params.target)
    if _lower(params.value) in _lower(text):
        return Check.passed(_found(params.value, params.target))
    return Check.failed(_not_found(params.value, params.target, text))


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
        return Check.failed(_found_anyway(params.value, params.target, text))
    return Check.passed(_absent(params.value, params.target))


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
            return Check.passed(_found(value, params.target))
    return Check.failed(
        phrased(
            "none of {values} found in {what}: {text}",
            values=short(params.value),
            what=_what(params.target),
            text=short(text),
        )
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
        return Check.failed(_not_found(missing, params.target, text))
    if len(params.value) == 1:
        return Check.passed(_found(params.value[0], params.target))
    return Check.passed(
        phrased(
            "all {count} values found in {what}",
            count=len(params.value),
            what=_what(params.target),
        )
    )


def _expected_text(value: Any) -> str:
    # What promptfoo's String(value) gives for a YAML scalar: `true`, `1` for 1.0.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_text(value)
    return str(value)


def _inequality(expected: Any, text: str) -> Message | None:
    """How the reply differs from ``expected``; None when it equals it."""
    if expected is None or isinstance(expected, dict | list):
        try:
            parsed = json.loads(text)
        except ValueError:
            return phrased("is not JSON: {text}", text=short(text))
        if expected is None:
            if parsed is None:
                return None
            return phrased("is {text}, expected JSON null", text=short(text))
        return mismatch(expected, parsed, exact=True)
    wanted = _expected_text(expected)
    if text == wanted:
        return None
    return phrased("is {text}, expected {wanted}", text=short(text), wanted=short(wanted))


@assertion("equals", level="L2", params=EqualsParams, failure_type="format")
def equals(params: EqualsParams, ctx: AssertionContext) -> Check:
    """The reply is exactly ``value`` (a mapping or list: the reply parsed as JSON equals it)."""
    return each_reply(
        ctx,
        params.target,
        lambda text: _inequality(params.value, text),
        phrased("equals {value}", value=short(params.value)),
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

    def problem(text: str) -> Message | None:
        if _inequality(params.value, text) is None:
            return phrased("equals {value}", value=short(params.value))
        return None

    return each_reply(
        ctx, params.target, problem, phrased("differs from {value}", value=short(params.value))
    )


@assertion(
    "starts_with",
    level="L2",
    params=ValueParams,
    failure_type="format",
    aliases=("starts-with",),
)
def starts_with(params: ValueParams, ctx: AssertionContext) -> Check:
    """The reply starts with ``value``."""

    def problem(text: str) -> Message | None:
        if text.startswith(params.value):
            return None
        return phrased(
            "starts {text}, expected {value}",
            text=short(text[: len(params.value) + 10]),
            value=short(params.value),
        )

    return each_reply(
        ctx, params.target, problem, phrased("starts with {value}", value=short(params.value))
    )


@assertion("regex", level="L2", params=RegexParams, failure_type="format")
def regex(params: RegexParams, ctx: AssertionContext) -> Check:
    """The regular expression matches somewhere in the reply."""
    text = _joined(ctx, params.target)
    found = params.pattern().search(text)
    if found:
        return Check.passed(_matched(params.value, found.group(0)))
    return Check.failed(
        phrased(
            "/{pattern}/ does not match {what}: {text}",
            pattern=params.value,
            what=_what(params.target),
            text=short(text),
        )
    )


def _matched(pattern: str, text: str) -> Message:
    return phrased("/{pattern}/ matched {text}", pattern=pattern, text=short(text))


@assertion(
    "not_regex", level="L2", params=RegexParams, failure_type="format", aliases=("not-regex",)
)
def not_regex(params: RegexParams, ctx: AssertionContext) -> Check:
    """The regular expression matches nowhere in the reply."""
    text = _joined(ctx, params.target)
    found = params.pattern().search(text)
    if found:
        return Check.failed(_matched(params.value, found.group(0)))
    return Check.passed(
        phrased(
            "/{pattern}/ matches nowhere in {what}", pattern=params.value, what=_what(params.target)
        )
    )


@assertion("length", level="L2", params=LengthParams, failure_type="format")
def length(params: LengthParams, ctx: AssertionContext) -> Check:
    """The reply has between ``min`` and ``max`` characters."""

    def problem(text: str) -> Message | None:
        size = len(text)
        if params.min is not None and size < params.min:
            return phrased_plural(
                "has {n} character, fewer than {min}",
                "has {n} characters, fewer than {min}",
                size,
                min=params.min,
            )
        if params.max is not None and size > params.max:
            return phrased_plural(
                "has {n} character, more than {max}",
                "has {n} characters, more than {max}",
                size,
                max=params.max,
            )
        return None

    bounds = f"{params.min or 0}..{'∞' if params.max is None else params.max}"
    return each_reply(
        ctx, params.target, problem, phrased("length within {bounds} characters", bounds=bounds)
    )
