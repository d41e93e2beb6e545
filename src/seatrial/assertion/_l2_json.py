"""L2 checks that read each reply as JSON: ``is_json`` and ``json_schema`` (promptfoo's names).

A schema's ``format`` is checked as promptfoo's ajv-formats checks it (:mod:`._json_formats`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import field_validator

from seatrial.assertion._common import each, schema_error, short
from seatrial.assertion._json_formats import format_checker
from seatrial.assertion._l2 import TextParams, each_reply
from seatrial.assertion._registry import AssertionContext, Check, assertion
from seatrial.assertion._values import Schema, check_schema
from seatrial.i18n import Message, phrased


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


def _schema_problem(schema: dict[str, Any] | bool | None, text: str) -> Message | None:
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        return phrased("is not JSON ({error}): {text}", error=str(exc), text=short(text))
    if schema is None:
        return None
    import jsonschema  # only a check with a schema pays for it

    kind = jsonschema.validators.validator_for(schema)
    validator = kind(schema, format_checker=format_checker())
    # In schema order, as ajv reports them, so the first named is the one promptfoo names.
    errors = list(validator.iter_errors(parsed))
    if not errors:
        return None
    shown = [
        schema_error(str(error.message), ".".join(str(part) for part in error.absolute_path))
        for error in errors[:3]
    ]
    said = phrased("does not meet the schema: {errors}", errors=each(shown))
    if len(errors) > 3:
        return phrased("{reason} (and {more} more)", reason=said, more=len(errors) - 3)
    return said


@assertion("is_json", level="L2", params=IsJsonParams, failure_type="format", aliases=("is-json",))
def is_json(params: IsJsonParams, ctx: AssertionContext) -> Check:
    """The reply is valid JSON (meeting the schema in ``value``, when given)."""
    ok = phrased("is JSON") if params.value is None else phrased("is JSON meeting the schema")
    return each_reply(ctx, params.target, lambda text: _schema_problem(params.value, text), ok)


@assertion(
    "json_schema",
    level="L2",
    params=JsonSchemaParams,
    failure_type="format",
    aliases=("json-schema",),
)
def json_schema(params: JsonSchemaParams, ctx: AssertionContext) -> Check:
    """The reply is JSON that meets the schema in ``value``."""
    return each_reply(
        ctx,
        params.target,
        lambda text: _schema_problem(params.value, text),
        phrased("meets the schema"),
    )
