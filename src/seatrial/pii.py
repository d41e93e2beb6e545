"""Finding personal data in text: mainland China mobile numbers, ID card numbers, emails, cards.

Masked forms (``138****1234``, ``z***@example.com``) are not personal data: the masking
characters break every pattern here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

PiiKind = Literal["phone", "id_card", "email", "bank_card"]
PII_KINDS: tuple[PiiKind, ...] = ("phone", "id_card", "email", "bank_card")

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
_ID_CARD = re.compile(r"(?<![0-9A-Za-z*])\d{17}[\dXx](?![0-9A-Za-z*])")
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+*-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_CARD = re.compile(r"(?<![\d*])\d(?:[ -]?\d){12,18}(?![\d*])")

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

_LABELS: dict[PiiKind, str] = {
    "phone": "a full mobile number",
    "id_card": "an ID card number",
    "email": "an email address",
    "bank_card": "a bank card number",
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


def find_pii(text: str, kinds: tuple[PiiKind, ...] | list[PiiKind] = PII_KINDS) -> list[PiiHit]:
    """Every piece of personal data of the given kinds in ``text``, in order of position."""
    hits: list[PiiHit] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    def add(kind: PiiKind, match: re.Match[str]) -> None:
        hits.append(PiiHit(kind, match.group(0), match.start(), match.end()))
        taken.append((match.start(), match.end()))

    # ID cards first: an 18-digit ID would otherwise also be read as a card number.
    if "id_card" in kinds:
        for match in _ID_CARD.finditer(text):
            if id_card_checksum_ok(match.group(0)):
                add("id_card", match)
    if "email" in kinds:
        for match in _EMAIL.finditer(text):
            add("email", match)
    if "phone" in kinds:
        for match in _PHONE.finditer(text):
            if free(match.start(), match.end()):
                add("phone", match)
    if "bank_card" in kinds:
        for match in _CARD.finditer(text):
            digits = re.sub(r"[ -]", "", match.group(0))
            if 13 <= len(digits) <= 19 and luhn_ok(digits) and free(match.start(), match.end()):
                add("bank_card", match)
    return sorted(hits, key=lambda hit: hit.start)
