"""The ``mask:`` section of ``seatrial.yaml``: what masking replaces before anything is stored.

Defined here, next to the masker that reads it; the project file only composes it. This module
imports no detection code, so reading the configuration stays cheap.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from seatrial.i18n import gettext as _

BuiltinMaskKind = Literal["id_card", "phone", "landline", "bank_card", "email"]
"""The kinds of personal data masking finds by itself, in the order they win an overlap."""

BUILTIN_MASK_KINDS: tuple[BuiltinMaskKind, ...] = (
    "id_card",
    "phone",
    "landline",
    "bank_card",
    "email",
)
"""Every built-in kind, in the order they win when two hits overlap."""

LIST_KINDS = ("name", "address")
"""The kinds found by the configured lists (``names:``, ``addresses:``)."""

_RESERVED = frozenset((*BUILTIN_MASK_KINDS, *LIST_KINDS))

ListEntry = Annotated[str, Field(min_length=2)]


class MaskPattern(BaseModel):
    """A custom kind of data to mask: its name (the token's prefix) and a regular expression."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$", max_length=40)
    """The kind's name, letters, digits and ``_``; its tokens read ``<NAME_1>`` in capitals
    (``order`` gives ``<ORDER_1>``)."""
    regex: str = Field(min_length=1)
    """A Python regular expression; every match is masked (the whole match, not a group)."""

    @field_validator("name")
    @classmethod
    def _not_builtin(cls, value: str) -> str:
        if value.lower() in _RESERVED:
            raise ValueError(
                _(
                    "pattern name {name} is a built-in kind under mask:; name the pattern "
                    "something else, e.g. `order_id`"
                ).format(name=repr(value))
            )
        return value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str, info: ValidationInfo) -> str:
        try:
            compiled = re.compile(value)
        except re.error as exc:
            # The message names the pattern, never its text: a regex may spell out a value.
            raise ValueError(
                _(
                    "the regex of pattern {name} under mask: patterns: does not compile "
                    "({error} at position {position}); fix it in seatrial.yaml"
                ).format(name=repr(info.data.get("name", "?")), error=exc.msg, position=exc.pos)
            ) from None
        if compiled.match(""):
            raise ValueError(
                _(
                    "the regex of pattern {name} under mask: patterns: matches the empty "
                    "string, so it would mask between every character; make it require at "
                    "least one character"
                ).format(name=repr(info.data.get("name", "?")))
            )
        return value


class MaskSettings(BaseModel):
    """The ``mask:`` section: which personal data is replaced by tokens before storage.

    Masking cannot be switched off: everything ingested is masked. These settings say what
    else to look for (names, addresses, custom patterns) and which built-in kinds to use.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kinds: list[BuiltinMaskKind] = Field(default_factory=lambda: list(BUILTIN_MASK_KINDS))
    """Built-in kinds to find: ``id_card`` (with its checksum), ``phone`` (mainland mobiles),
    ``landline`` (with an area code), ``bank_card`` (Luhn), ``email``; default all."""
    names: list[ListEntry] = Field(default_factory=list, repr=False)
    """People's names to mask wherever they appear (Chinese names need no spaces around them;
    Latin ones must stand as whole words); matched without regard to case, longest first."""
    addresses: list[ListEntry] = Field(default_factory=list, repr=False)
    """Addresses or parts of addresses (streets, estates) to mask, matched like names."""
    patterns: list[MaskPattern] = Field(default_factory=list)
    """Custom kinds: ``{name: order, regex: "ORD-\\d{8}"}`` masks order numbers as
    ``<ORDER_1>``."""

    @model_validator(mode="after")
    def _distinct_pattern_names(self) -> MaskSettings:
        seen: set[str] = set()
        for pattern in self.patterns:
            key = pattern.name.lower()
            if key in seen:
                raise ValueError(
                    _(
                        "two patterns under mask: patterns: are named {name}; give each its "
                        "own name (the name is the token's prefix)"
                    ).format(name=repr(pattern.name))
                )
            seen.add(key)
        return self
