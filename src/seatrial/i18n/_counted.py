"""A count said with its English noun in the right number: "1 case", "2 cases", "0 cases".

For text not yet marked for translation (it reads in English whatever the reader's language,
so its counts must too). Translated text says its counts with :func:`ngettext`, whose English
forms follow the same rule.
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, singular for exactly one and plural otherwise.

    ``plural`` is the plural where adding "s" is wrong ("1 retry", "2 retries").
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
