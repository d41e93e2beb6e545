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

_PHONE = re.compile(r"(?<![\d*])(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?![\d*])")
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
