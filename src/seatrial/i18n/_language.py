"""Which language the reader reads, and where that choice came from.

In this order: ``--lang``, then ``SEATRIAL_LANG``, then ``seatrial.yaml``'s ``language:``, then
the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: the first one set, as POSIX reads them),
then English. A value someone wrote on purpose (the option, the variable, the key) that names
no language Seatrial speaks is bad input; a locale Seatrial has no catalog for is English.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from seatrial.errors import InputError

Language = Literal["en", "zh_CN"]
"""A language Seatrial speaks: English, or Simplified Chinese (its catalog is ``zh_CN``)."""

LANGUAGES: tuple[Language, ...] = ("en", "zh_CN")
"""Every :data:`Language`, English (the source language) first."""

LANGUAGE_ENV = "SEATRIAL_LANG"
"""Environment variable naming the reader's language; ``--lang`` wins over it."""

ACCEPTED_LANGUAGES = "en, zh (also written zh-CN, zh_CN, zh_CN.UTF-8 or zh-Hans)"
"""What an error about a language says is accepted."""

_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The locale's variables, the one that wins first."""

_CHINESE = frozenset({"zh", "zh_cn", "zh_hans", "zh_hans_cn"})
"""Tags naming Simplified Chinese, lower case, ``-`` written ``_``."""


def language_of(value: str) -> Language | None:
    """The language a tag or locale names, None when it names neither of :data:`LANGUAGES`.

    ``zh``, ``zh-CN``, ``zh_CN``, ``zh_CN.UTF-8`` and ``zh-Hans`` are Simplified Chinese;
    ``en``, ``en-US``, ``en_GB.UTF-8`` ... are English. Case does not matter.
    """
    tag = value.strip().split(".", 1)[0].split("@", 1)[0].replace("-", "_").lower()
    if tag in _CHINESE:
        return "zh_CN"
    if tag == "en" or tag.startswith("en_"):
        return "en"
    return None


def unknown_language(value: str, source: str = "") -> str:
    """The message for ``value``, written in ``source`` (``--lang``; none where the caller
    says where), that names no language we speak."""
    written = f"{source} {value!r}" if source else repr(value)
    return f"{written} is not a language Seatrial speaks; use {ACCEPTED_LANGUAGES}"


def parse_language(value: str, source: str) -> Language:
    """The language ``value`` names.

    Raises:
        InputError: it names none of :data:`LANGUAGES`; the message names ``source`` (where
            the value was written) and what is accepted (exit 2).
    """
    language = language_of(value)
    if language is None:
        raise InputError(unknown_language(value, source))
    return language


def locale_language(environ: Mapping[str, str]) -> Language:
    """The locale's language: the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set
    and not empty decides; English when it names another language (``C``, ``fr_FR``) or when
    none is set."""
    for name in _LOCALE_VARIABLES:
        value = environ.get(name)
        if value:
            return language_of(value) or "en"
    return "en"


def reader_language(
    option: str | None,
    configured: Language | None = None,
    environ: Mapping[str, str] | None = None,
) -> Language:
    """The reader's language: ``option`` (``--lang``), else ``SEATRIAL_LANG`` (when set and not
    empty), else ``configured`` (``seatrial.yaml``'s ``language:``, checked when the file was
    read), else the locale's.

    Raises:
        InputError: ``option`` or ``SEATRIAL_LANG`` names no language we speak (exit 2).
    """
    environ = os.environ if environ is None else environ
    if option is not None:
        return parse_language(option, "--lang")
    variable = environ.get(LANGUAGE_ENV)
    if variable:
        return parse_language(variable, LANGUAGE_ENV)
    if configured is not None:
        return configured
    return locale_language(environ)
