"""Reading text as its NFKC compatibility forms, character for character.

Personal data is written with full-width digits (``１３９１２３４５６７８``), a full-width
``＠`` or ideographic spaces as often as with ASCII. The finder reads every character whose
NFKC form is one ASCII letter, digit or sign it looks for as that character, so one pattern
finds both. Only such one-for-one forms are read: the folded text has the length of the
original, so a position found in it is the same position in the original, and masking
replaces exactly the characters that were written (the text around a hit stays as it was).
Characters whose NFKC form is longer (``⑩`` is ``10``, ``㈱`` is ``(株)``) and those past
the Basic Multilingual Plane (mathematical ``𝟏𝟑𝟗``) are read as they are.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Iterable

FOLDED_SIGNS = "@.-+_%* "
"""The ASCII signs the patterns read, besides letters and digits."""

_TARGETS = frozenset(string.ascii_letters + string.digits + FOLDED_SIGNS)

# Every code point of the Basic Multilingual Plane outside ASCII whose NFKC form is one
# character of _TARGETS lies in these ranges (tests/pii/test_find_pii.py checks it against
# the running Python's Unicode data): full-width forms, small forms, the ideographic and
# other spaces, superscripts and subscripts, circled digits. Characters past that plane
# (mathematical ``𝟏``) are read as they are: a class reaching past it is tested range by
# range, which made every search several times slower on Chinese text.
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
)


@functools.cache
def _folding() -> tuple[dict[int, str], re.Pattern[str]]:
    """The translation table and a pattern finding runs of the characters it changes (made
    once, on the first text outside ASCII: about a millisecond)."""
    table: dict[int, str] = {}
    for low, high in _RANGES:
        for code in range(low, high):
            form = unicodedata.normalize("NFKC", chr(code))
            if form in _TARGETS:
                table[code] = form
    runs = re.compile(_char_class(chr(code) for code in table) + "+")
    return table, runs


def _char_class(chars: Iterable[str]) -> str:
    """A character class of ``chars``, written as ranges of consecutive code points."""
    ranges: list[list[int]] = []
    for code in sorted({ord(char) for char in chars}):
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    parts = (
        re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
        for low, high in ranges
    )
    return "[" + "".join(parts) + "]"


def compatibility_forms(text: str) -> str:
    """``text`` with each character whose NFKC form is one ASCII letter, digit or sign of
    ``@.-+_%*`` and the space written as that character; the same length as ``text``.

    ``１３９ １２３４ ５６７８`` reads ``139 1234 5678``, ``张三＠例子.公司`` reads
    ``张三@例子.公司``; Chinese characters and punctuation (``，``, ``：``, ``（``) stay.
    """
    if text.isascii():
        return text
    table, runs = _folding()
    # Only the runs of such characters are translated: translating a whole text looks every
    # character up in the table, several times slower on long Chinese text.
    return runs.sub(lambda run: run.group().translate(table), text)


def forms_of(chars: str) -> str:
    """A regular expression's character class matching each of ``chars`` and every
    character :func:`compatibility_forms` reads as one of them: ``forms_of("@")`` matches
    ``@``, ``＠`` and ``﹫``."""
    table, _ = _folding()
    wanted = set(chars)
    return _char_class([*chars, *(chr(code) for code, form in table.items() if form in wanted)])
