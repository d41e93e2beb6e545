"""Reading text as its NFKC compatibility forms, character for character.

Personal data is written with full-width digits (``１３９１２３４５６７８``), a full-width
``＠`` or ideographic spaces as often as with ASCII. The finder reads every character whose
NFKC form is one ASCII letter, digit or sign it looks for as that character, so one pattern
finds both. Only such one-for-one forms are read: the folded text has the length of the
original, so a position found in it is the same position in the original, and masking
replaces exactly the characters that were written (the text around a hit stays as it was).
Characters whose NFKC form is longer (``⑩`` is ``10``, ``㈱`` is ``(株)``) are read as
they are.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata

FOLDED_SIGNS = "@.-+_%* "
"""The ASCII signs the patterns read, besides letters and digits."""

_TARGETS = frozenset(string.ascii_letters + string.digits + FOLDED_SIGNS)

# Every code point outside ASCII whose NFKC form is one character of _TARGETS lies in these
# ranges (tests/pii/test_fold.py checks it against every code point of the running Python's
# Unicode data): full-width forms, small forms, the ideographic and other spaces,
# superscripts and subscripts, circled digits, mathematical letters and digits.
_RANGES = (
    (0xA0, 0xBB),
    (0x17F, 0x180),
    (0x2B0, 0x2E4),
    (0x1D2C, 0x1DBC),
    (0x2000, 0x2180),
    (0x2460, 0x24EB),
    (0x2C7C, 0x2C7E),
    (0x3000, 0x3001),
    (0xA7F2, 0xA7F5),
    (0xFB29, 0xFB2A),
    (0xFE33, 0xFE6C),
    (0xFF05, 0xFF5B),
    (0x107A5, 0x107A6),
    (0x1D400, 0x1D6A4),
    (0x1D7CE, 0x1D800),
    (0x1F12B, 0x1F14A),
    (0x1FBF0, 0x1FBFA),
)


@functools.cache
def _folding() -> tuple[dict[int, str], re.Pattern[str]]:
    """The translation table and a pattern finding any character it changes (made once, on
    the first text outside ASCII: about a millisecond)."""
    table: dict[int, str] = {}
    for low, high in _RANGES:
        for code in range(low, high):
            form = unicodedata.normalize("NFKC", chr(code))
            if form in _TARGETS:
                table[code] = form
    foldable = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(table)) + "]")
    return table, foldable


def compatibility_forms(text: str) -> str:
    """``text`` with each character whose NFKC form is one ASCII letter, digit or sign of
    ``@.-+_%*`` and the space written as that character; the same length as ``text``.

    ``１３９ １２３４ ５６７８`` reads ``139 1234 5678``, ``张三＠例子.公司`` reads
    ``张三@例子.公司``; Chinese characters and punctuation (``，``, ``：``, ``（``) stay.
    """
    if text.isascii():
        return text
    table, foldable = _folding()
    if foldable.search(text) is None:
        return text
    return text.translate(table)
