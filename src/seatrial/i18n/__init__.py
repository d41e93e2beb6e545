"""The reader's language: English or Simplified Chinese, and text translated into it.

The language comes from ``--lang``, ``SEATRIAL_LANG``, ``seatrial.yaml``'s ``language:``, then
the locale (:func:`reader_language`); a command sets it for what it prints and writes
(:func:`set_language`). Marked strings (``_``, that is :func:`gettext`; :func:`ngettext`,
:func:`pgettext`, :func:`N_`) are translated from gettext catalogs shipped in this package,
which Babel extracts and compiles (docs/i18n.md). Only the standard library is imported here.
"""

from seatrial.i18n._catalog import (
    DOMAIN,
    LOCALE_DIR,
    N_,
    catalog,
    current_language,
    gettext,
    ngettext,
    pgettext,
    set_language,
    use_language,
)
from seatrial.i18n._counted import counted
from seatrial.i18n._language import (
    ACCEPTED_LANGUAGES,
    LANGUAGE_ENV,
    LANGUAGES,
    Language,
    language_of,
    locale_language,
    parse_language,
    reader_language,
    unknown_language,
)
from seatrial.i18n._message import Message, english, phrased, phrased_plural, render

__all__ = [
    "ACCEPTED_LANGUAGES",
    "DOMAIN",
    "LANGUAGES",
    "LANGUAGE_ENV",
    "LOCALE_DIR",
    "N_",
    "Language",
    "Message",
    "catalog",
    "counted",
    "current_language",
    "english",
    "gettext",
    "language_of",
    "locale_language",
    "ngettext",
    "parse_language",
    "pgettext",
    "phrased",
    "phrased_plural",
    "reader_language",
    "render",
    "set_language",
    "unknown_language",
    "use_language",
]
