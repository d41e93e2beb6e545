"""Finding personal data in text (the one owner: the ``no_pii_leak`` rule and masking of
ingested traces both call it): mainland China mobile numbers, ID card numbers, emails, cards,
and landline numbers.

Masked forms (``138****1234``, ``z***@example.com``) are not personal data: the masking
characters break every pattern here.

Landlines are a kind of their own: the ``no_pii_leak`` rule does not look for them unless it
is asked to (an agent that gives out a shop's number leaks nothing), while masking before
storage does (a customer's home number is personal).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ALL_PII_KINDS",
    "PII_KINDS",
    "PiiHit",
    "PiiKind",
    "find_pii",
    "id_card_checksum_ok",
    "is_phone_number",
    "luhn_ok",
    "pii_prefilter",
]

PiiKind = Literal["phone", "id_card", "email", "bank_card", "landline"]
PII_KINDS: tuple[PiiKind, ...] = ("phone", "id_card", "email", "bank_card")
"""The kinds ``find_pii`` looks for unless told otherwise (landlines are not among them)."""
ALL_PII_KINDS: tuple[PiiKind, ...] = (*PII_KINDS, "landline")
"""Every kind ``find_pii`` knows."""

_MOBILE = r"(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}"
_PHONE = re.compile(rf"(?<![\d*]){_MOBILE}(?![\d*])")
_WHOLE_MOBILE = re.compile(_MOBILE)
# An area code joined by a hyphen, then the local number and an optional extension.
_LANDLINE = re.compile(r"0\d{2,3}-\d{7,8}(?:-\d{1,5})?")
_SERVICE = re.compile(r"[48]00-?\d{3}-?\d{4}")
# A 7- or 8-digit local number is a phone number only where the text says so: after an area
# code written apart ("(010) 12345678", "010 12345678") or a word such as 电话 or tel.
_LOCAL = re.compile(r"\d{7,8}")
_LOCAL_LEAD = re.compile(
    r"(?:[(（]0\d{2,3}[)）]\s?|(?<!\d)0\d{2,3} "
    r"|(?:电话|热线|座机|拨打|致电|(?<![a-z])(?:tel|phone|call))[\s:：.是为]*)$",
    re.IGNORECASE,
)
# A landline a person may own: an area code (010 and 02X take an 8-digit local number, the
# 4-digit codes 0[3-9]XX a 7- or 8-digit one) and an optional extension. The area code is set
# apart by a hyphen, a space or brackets; written together with the local number it is told
# from an order number only after a word such as 电话 or tel, which also introduces a bare
# local number. A decimal point after it makes it an amount.
_AREA_LOCAL = (
    (r"(?:010|02\d)", r"\d{8}"),
    (r"0[3-9]\d{2}", r"\d{7,8}"),
)
_APART = "|".join(f"(?:[(（]{area}[)）][ -]?|{area}[ -]){local}" for area, local in _AREA_LOCAL)
_TOGETHER = "|".join(f"{area}{local}" for area, local in _AREA_LOCAL)
_LANDLINE_APART = re.compile(rf"(?<![\d*])(?:{_APART})(?:-\d{{1,5}})?(?![\d*]|\.\d)")
_LEAD_WORDS = ("电话", "热线", "座机", "拨打", "致电", "tel", "phone", "call")
_LANDLINE_AFTER_WORD = re.compile(
    r"(?:电话|热线|座机|拨打|致电|(?<![a-z])(?:tel|phone|call))[\s:：.是为]*"
    rf"(?P<number>(?:{_TOGETHER}|\d{{7,8}})(?:-\d{{1,5}})?)(?![\d*]|\.\d)",
    re.IGNORECASE,
)
_ID_CARD = re.compile(r"(?<![0-9A-Za-z*])\d{17}[\dXx](?![0-9A-Za-z*])")
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+*-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_CARD = re.compile(r"(?<![\d*])\d(?:[ -]?\d){12,18}(?![\d*])")

# A number's digits and what may stand between them; find_pii looks only around these.
_CLUSTER = re.compile(r"[\d(（+][\d \-()（）+]*")
_NON_DIGIT = re.compile(r"\D")
# Tried only where a run of digits starts (the look-behind comes after the first digit, so
# the search skips to digits quickly); possessive separators never backtrack.
_NUMBER_HINT = re.compile(r"\d(?<!\d\d)(?:[ \-()（）+]{0,3}+\d){10}")
_SEVEN_DIGITS = re.compile(r"\d(?<!\d\d)\d{6}")
# The same two tests on ASCII text, where \d is [0-9]: bytes.translate marks digits ``#`` and
# everything else ``.`` (deleting the separators _NUMBER_HINT allows, for the first), and a
# substring search finds the runs, in two C passes instead of a regex attempt at every digit.
_DIGITS_MARKED = bytes(35 if 48 <= byte <= 57 else 46 for byte in range(256))
_HINT_SEPARATORS = b" -()+"
_LEAD_ROOM = 16
"""Characters kept before a cluster: room for ``+86``, ``电话是：`` or ``phone: ``."""
_NUMBER_KINDS = frozenset({"phone", "id_card", "bank_card", "landline"})

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

_LABELS: dict[PiiKind, str] = {
    "phone": "a full mobile number",
    "id_card": "an ID card number",
    "email": "an email address",
    "bank_card": "a bank card number",
    "landline": "a landline number",
}


@dataclass(frozen=True)
class PiiHit:
    """One piece of personal data found in a text."""

    kind: PiiKind
    text: str
    start: int
    end: int

    @property
    def masked(self) -> str:
        """The value with its middle hidden, safe to show in a report."""
        if self.kind == "email":
            local, _, domain = self.text.partition("@")
            return f"{local[:1]}***@{domain}"
        digits = re.sub(r"[^0-9Xx]", "", self.text)
        if self.kind == "phone":
            digits = digits[-11:]  # without the +86 country code
        return digits[:3] + "*" * max(len(digits) - 7, 4) + digits[-4:]

    @property
    def label(self) -> str:
        """What it is, in words."""
        return _LABELS[self.kind]


def id_card_checksum_ok(number: str) -> bool:
    """Whether an 18-character mainland ID number's last character is its GB 11643 checksum."""
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17].upper()


def luhn_ok(digits: str) -> bool:
    """Whether a digit string passes the Luhn check bank card numbers carry."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def is_phone_number(text: str, before: str = "") -> bool:
    """Whether ``text`` as a whole is a phone number.

    A mainland mobile (``13800138000``, ``+86 138-0013-8000``), a landline with its area code
    (``010-12345678``, ``0755-1234567-801``), a 400/800 service number (``400-812-3123``), or a
    7- or 8-digit local number that ``before`` (the text just before it) introduces with an area
    code written apart (``(010) 12345678``) or a word such as 电话, 热线 or tel. Only mobiles
    are personal data (``find_pii``); the rest are company lines.
    """
    if _WHOLE_MOBILE.fullmatch(text) or _LANDLINE.fullmatch(text) or _SERVICE.fullmatch(text):
        return True
    return bool(_LOCAL.fullmatch(text) and _LOCAL_LEAD.search(before))


def _windows(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The stretches of ``text`` where a number ``find_pii`` looks for may stand.

    Every such number has at least eleven digits (a mobile, a landline with its area code, an
    ID or card number), written together or apart by spaces, hyphens, brackets or a ``+``,
    except a landline of seven digits or more after a word such as 电话. A stretch runs from
    the cluster (from room for that word before it, in the second list) to the two characters
    after it; the patterns' look-behinds still see the text before a stretch.
    Scanning these stretches instead of the whole text gives the same hits at a fraction of
    the cost: a pattern that opens with a look-behind is tried at every position it is given.
    The first list holds the stretches of eleven digits or more, the second every stretch.
    """
    long: list[tuple[int, int]] = []
    every: list[tuple[int, int]] = []
    for cluster in _CLUSTER.finditer(text):
        digits = len(_NON_DIGIT.sub("", cluster.group(0)))
        if digits < 7:
            continue
        end = cluster.end() + 2
        _extend(every, (max(cluster.start() - _LEAD_ROOM, 0), end))
        if digits >= 11:
            _extend(long, (cluster.start(), end))
    return long, every


def _extend(windows: list[tuple[int, int]], window: tuple[int, int]) -> None:
    if windows and window[0] <= windows[-1][1]:
        windows[-1] = (windows[-1][0], window[1])
    else:
        windows.append(window)


def _matches(
    pattern: re.Pattern[str], text: str, windows: list[tuple[int, int]]
) -> Iterator[re.Match[str]]:
    for start, end in windows:
        yield from pattern.finditer(text, start, end)


def pii_prefilter(kinds: Iterable[PiiKind] = PII_KINDS) -> Callable[[str], bool]:
    """A cheap test that is True for every text where ``find_pii(text, kinds)`` finds
    anything (and for few others), so a caller scanning many texts can skip the full search.

    It looks for eleven digits with at most three separators between any two, for seven
    digits in a row and a word such as 电话 (landlines), and for an ``@``.
    """
    chosen = set(kinds)
    numbers = _NUMBER_KINDS.intersection(chosen)
    landline = "landline" in chosen
    email = "email" in chosen

    def may_hold(text: str) -> bool:
        if email and "@" in text:
            return True
        if len(text) < 7:
            return False  # too short for seven digits, let alone eleven
        if text.isascii():
            raw = text.encode("ascii")
            # Eleven digits apart only by separators are needed for a _NUMBER_HINT match; the
            # regex then decides, so the answer is the regex's.
            if (
                numbers
                and b"###########" in raw.translate(_DIGITS_MARKED, _HINT_SEPARATORS)
                and _NUMBER_HINT.search(text) is not None
            ):
                return True
            if not landline or b"#######" not in raw.translate(_DIGITS_MARKED):
                return False
        else:
            if numbers and _NUMBER_HINT.search(text) is not None:
                return True
            if not landline or _SEVEN_DIGITS.search(text) is None:
                return False
        lower = text.lower()
        return any(word in lower for word in _LEAD_WORDS)

    return may_hold


def find_pii(text: str, kinds: tuple[PiiKind, ...] | list[PiiKind] = PII_KINDS) -> list[PiiHit]:
    """Every piece of personal data of the given kinds in ``text``, in order of position."""
    hits: list[PiiHit] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    def add(kind: PiiKind, match: re.Match[str], group: int | str = 0) -> None:
        start, end = match.span(group)
        hits.append(PiiHit(kind, match.group(group), start, end))
        taken.append((start, end))

    windows, lead_windows = _windows(text) if _NUMBER_KINDS.intersection(kinds) else ([], [])
    # ID cards first: an 18-digit ID would otherwise also be read as a card number.
    if "id_card" in kinds:
        for match in _matches(_ID_CARD, text, windows):
            if id_card_checksum_ok(match.group(0)):
                add("id_card", match)
    if "email" in kinds and "@" in text:
        for match in _EMAIL.finditer(text):
            add("email", match)
    if "phone" in kinds:
        for match in _matches(_PHONE, text, windows):
            if free(match.start(), match.end()):
                add("phone", match)
    if "landline" in kinds:
        for match in _matches(_LANDLINE_APART, text, windows):
            if free(match.start(), match.end()):
                add("landline", match)
        for match in _matches(_LANDLINE_AFTER_WORD, text, lead_windows):
            if free(*match.span("number")):
                add("landline", match, "number")
    if "bank_card" in kinds:
        for match in _matches(_CARD, text, windows):
            digits = re.sub(r"[ -]", "", match.group(0))
            if 13 <= len(digits) <= 19 and luhn_ok(digits) and free(match.start(), match.end()):
                add("bank_card", match)
    return sorted(hits, key=lambda hit: hit.start)
