"""The reader's language while a command runs, and the translated text of marked strings.

Text is written in English in the code, marked with ``_`` (:func:`gettext`, imported as
``from seatrial.i18n import gettext as _``), :func:`ngettext` or :func:`pgettext`; :func:`N_`
marks a string that is translated later, where it is shown. It is translated
from the compiled gettext catalog shipped in this package
(``locale/LANG/LC_MESSAGES/seatrial.mo``), read by the standard library's :mod:`gettext`.
Babel extracts the marked strings and compiles the catalogs (``make catalogs``,
docs/i18n.md); it is not needed at run time.

The language is ambient: one context variable, set here and only here (:func:`set_language`,
:func:`use_language`). English is the default, and English text is the marked string itself.
Each CLI command runs in its own copy of the context, so a language it sets ends with it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from seatrial.i18n._language import Language

if TYPE_CHECKING:
    from gettext import GNUTranslations

DOMAIN = "seatrial"
"""The catalogs' gettext domain: ``seatrial.po`` / ``seatrial.mo``."""

LOCALE_DIR = Path(__file__).parent / "locale"
"""Where the catalogs are: ``LANG/LC_MESSAGES/seatrial.po`` and its compiled ``.mo``."""

_language: ContextVar[Language] = ContextVar("seatrial_language", default="en")


def current_language() -> Language:
    """The language text is translated into now (English unless one was set)."""
    return _language.get()


def set_language(language: Language) -> None:
    """Translate into ``language`` from now on, in this context (a CLI command's own copy)."""
    _language.set(language)


@contextmanager
def use_language(language: Language) -> Iterator[None]:
    """Translate into ``language`` inside the block; the language before it is put back."""
    token = _language.set(language)
    try:
        yield
    finally:
        _language.reset(token)


@functools.cache
def catalog(language: Language) -> GNUTranslations:
    """The compiled catalog of ``language`` (not English, which has none), read once.

    Raises:
        FileNotFoundError: the package was built without it (a broken installation).
    """
    import gettext  # only when text is translated: English never reads a catalog

    found = gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[language])
    assert isinstance(found, gettext.GNUTranslations)
    return found


def gettext(message: str) -> str:
    """``message`` in the reader's language (itself in English, or with no translation)."""
    language = _language.get()
    return message if language == "en" else catalog(language).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """``singular`` or ``plural`` as ``n`` asks, in the reader's language (Chinese has one
    form for every ``n``)."""
    language = _language.get()
    if language == "en":
        return singular if n == 1 else plural
    return catalog(language).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the reader's language, translated as a ``context`` (``verdict``,
    ``failure type``): the same English word may need two translations."""
    language = _language.get()
    return message if language == "en" else catalog(language).pgettext(context, message)


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for it)
    """Mark ``message`` for the catalogs without translating it: for text kept in a constant
    and translated with ``_`` (:func:`gettext`) where it is shown."""
    return message
