"""Finding ids in replies (order, ticket, waybill numbers) and whether the input supplied them.

An id is a token of letters and digits holding at least one of each (``ORD20240701``,
``TCK-482913``), or a number of 8 or more digits (``20240511001``) that is not a date, an
amount of money or a phone number. Chinese text puts no space between words and numbers
(``订单20240511001已发货``), so a token ends wherever the characters stop being ASCII letters,
digits, ``_`` or ``-``. Full-width letters and digits (``２０２４``) read as their ASCII forms.
"""

from __future__ import annotations

import datetime
import re

from seatrial.pii import is_phone_number

_ID_CHAR = r"[A-Za-z0-9_-]"
LETTER_DIGIT_ID = (
    rf"(?<!{_ID_CHAR})(?={_ID_CHAR}*[0-9])(?={_ID_CHAR}*[A-Za-z])"
    rf"[A-Za-z0-9]{_ID_CHAR}{{5,}}(?!{_ID_CHAR})"
)
"""6 or more letters, digits, ``_`` or ``-``, with a letter and a digit."""

_LETTER_DIGIT = re.compile(LETTER_DIGIT_ID)
# Digit groups joined by single hyphens are one number: 20240511-001 is an id, 2024-05-11 a date.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_-])[0-9]+(?:-[0-9]+)*(?![A-Za-z0-9_-])")
MIN_DIGITS = 8
"""Digit-only numbers shorter than this are counts, codes and years, not ids."""

_CURRENCY = r"[¥￥$€£]|RMB|CNY|USD|HKD|EUR|GBP|JPY|人民币"
_MONEY_BEFORE = re.compile(rf"(?:{_CURRENCY})\s?$", re.IGNORECASE)
_MONEY_AFTER = re.compile(
    r"^\s?(?:元|块|圆|角|万|亿|美元|港元|港币|欧元|日元|英镑|RMB|CNY|USD|HKD|EUR|yuan|dollars?)",
    re.IGNORECASE,
)
_LETTERED_MONEY = re.compile(
    r"(?:RMB|CNY|USD|HKD|EUR|GBP|JPY)\d+|\d+(?:RMB|CNY|USD|HKD|EUR|GBP|JPY|yuan)", re.IGNORECASE
)
_ISO_DATETIME = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})T\d{2}(?:\d{2}){0,2}Z?")

_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


def ascii_forms(text: str) -> str:
    """``text`` with full-width letters, digits and signs (``２０２４``) as ASCII; same length."""
    return text.translate(_FULL_WIDTH)


def _valid_date(year: str, month: str, day: str) -> bool:
    if not 1900 <= int(year) <= 2099:
        return False
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def _dates(groups: list[str]) -> bool:
    """Whether the hyphen-separated groups are one or more dates back to back.

    ``20240511`` and ``2024-05-11`` are dates, and so are ranges such as ``20240501-20240531``.
    """
    if not groups:
        return True
    head = groups[0]
    if len(head) == 8 and _valid_date(head[:4], head[4:6], head[6:]):
        if _dates(groups[1:]):
            return True
    if len(groups) >= 3 and len(head) == 4 and all(len(g) in (1, 2) for g in groups[1:3]):
        return _valid_date(head, groups[1], groups[2]) and _dates(groups[3:])
    return False


def _is_number_id(text: str, start: int, end: int) -> bool:
    token = text[start:end]
    if len(token.replace("-", "")) < MIN_DIGITS:
        return False
    before, after = text[max(0, start - 12) : start], text[end : end + 4]
    if _MONEY_BEFORE.search(before) or _MONEY_AFTER.search(after):
        return False
    # A decimal point makes it a measure or an amount (12345678.50), never an id.
    if re.match(r"\.[0-9]", after) or re.search(r"[0-9]\.$", before):
        return False
    return not _dates(token.split("-")) and not is_phone_number(token, before)


def _is_letter_digit_id(token: str) -> bool:
    if _LETTERED_MONEY.fullmatch(token):
        return False
    stamp = _ISO_DATETIME.fullmatch(token)
    return not (stamp and _valid_date(*stamp.groups()))


def prefixed_id_pattern(prefix: str) -> str:
    """Ids that start with ``prefix`` and hold a digit (``BK-9931`` for ``BK-``)."""
    return rf"(?<!{_ID_CHAR}){re.escape(ascii_forms(prefix))}{_ID_CHAR}*[0-9]{_ID_CHAR}*"


def find_ids(text: str) -> list[tuple[int, int]]:
    """Where the ids in ``text`` (already in :func:`ascii_forms`) are, in order of position."""
    spans = [m.span() for m in _LETTER_DIGIT.finditer(text) if _is_letter_digit_id(m.group(0))]
    spans += [m.span() for m in _NUMBER.finditer(text) if _is_number_id(text, *m.span())]
    return sorted(spans)


def _without_digit_separators(text: str) -> str:
    return re.sub(r"(?<=[0-9])[ -](?=[0-9])", "", text)


def _appears(token: str, text: str) -> bool:
    edge = "[0-9]" if re.fullmatch(r"[0-9][0-9 -]*", token) else "[A-Za-z0-9]"
    before = f"(?<!{edge})" if re.match(edge, token) else ""
    after = f"(?!{edge})" if re.match(edge, token[-1:]) else ""
    return re.search(before + re.escape(token) + after, text) is not None


class SuppliedText:
    """The text ids may come from; ``token in supplied`` when it appears there whole.

    A token counts only whole: ``2024051100`` is not supplied by ``20240511001``. A number is
    whole between non-digits (a tool's ``ORD20240511001`` supplies ``20240511001``), any other
    token between characters that are not ASCII letters or digits. Spaces and hyphens between
    digits do not matter (a user's ``2024 0511 001`` supplies ``20240511001``).
    """

    def __init__(self, text: str) -> None:
        self.text = ascii_forms(text)
        self._joined = _without_digit_separators(self.text)

    def __contains__(self, token: object) -> bool:
        if not isinstance(token, str) or not token:
            return False
        token = ascii_forms(token)
        return _appears(token, self.text) or _appears(
            _without_digit_separators(token), self._joined
        )
