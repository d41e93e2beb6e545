"""Assertion values read as promptfoo reads them, for the L2 text assertions.

Numbers are written as JavaScript prints them, comma-separated strings are split by
promptfoo's CSV rules (quoted values, doubled quotes, JavaScript's trimming), and a JSON schema
may come as YAML text and is checked, formats included, when the suite loads.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Annotated, Any

import yaml
from pydantic import BeforeValidator

from seatrial.assertion._common import short
from seatrial.assertion._json_formats import KNOWN_FORMATS, named_formats
from seatrial.i18n import gettext as _

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
        raise ValueError(_("`value` is NaN, which matches nothing: write the text to look for"))
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
        _(
            "the quoted value that starts at character {position} of {text} is never closed: "
            'add the closing `"`, or write `value` as a YAML list'
        ).format(position=start + 1, text=short(text))
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
                    _(
                        "{text} has {rest} after the closing quote of {value}: put a comma "
                        "between values, or write `value` as a YAML list"
                    ).format(text=short(text), rest=short(text[index:], 20), value=short(value))
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
            raise ValueError(
                _("{value} names no text to look for: give at least one value").format(
                    value=short(value)
                )
            )
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
                _(
                    "Seatrial does not read a schema from a `file://` reference: write the "
                    "schema under `value` (YAML), or load it in a plugin assertion"
                )
            )
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(
                _("`value` is text but not a YAML or JSON schema: {error}").format(error=exc)
            ) from exc
    return value


def check_schema(schema: dict[str, Any] | bool) -> None:
    import jsonschema  # only a suite that gives a schema pays for it
    from jsonschema.exceptions import SchemaError

    try:
        # A bare true/false is a valid schema (everything / nothing); the stubs say mapping.
        jsonschema.validators.validator_for(schema).check_schema(schema)  # type: ignore[arg-type]
    except SchemaError as exc:
        raise ValueError(_("invalid JSON schema: {error}").format(error=exc.message)) from exc
    unknown = sorted(set(named_formats(schema)) - KNOWN_FORMATS)
    if unknown:
        raise ValueError(
            _(
                "the schema names the format {formats}, which Seatrial cannot check (nor can "
                "promptfoo): use one of {known}"
            ).format(formats=", ".join(map(repr, unknown)), known=", ".join(sorted(KNOWN_FORMATS)))
        )


Schema = Annotated[dict[str, Any] | bool, BeforeValidator(_schema)]
