"""Finding personal data in text (the one owner: the ``no_pii_leak`` rule and masking of
ingested traces both call it): mainland China mobile numbers, ID card numbers, emails, cards,
and landline numbers.

Text is read as its compatibility forms first (``_fold``: full-width digits, ``＠`` and
ideographic spaces as ASCII, position for position), and every value must stand apart from
Latin letters and digits (``_patterns``).

Masked forms (``138****1234``, ``z***@example.com``) are not personal data: the masking
characters break every pattern here.

Landlines are a kind of their own: the ``no_pii_leak`` rule does not look for them unless it
is asked to (an agent that gives out a shop's number leaks nothing), while masking before
storage does (a customer's home number is personal).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from seatrial.pii._fold import compatibility_forms, forms_of
from seatrial.pii._patterns import (
    CARD,
    EMAIL,
    ID_CARD_15,
    ID_CARD_18,
    LANDLINE_AFTER_WORD,
    LANDLINE_APART,
    LEAD_WORDS,
    PHONE,
    card_prefix_ok,
    email_start,
    id_card_checksum_ok,
    luhn_ok,
    old_id_card_ok,
)

__all__ = [
    "ALL_PII_KINDS",
    "PII_KINDS",
    "PiiHit",
    "PiiKind",
    "card_prefix_ok",
    "compatibility_forms",
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

# is_phone_number's own patterns: a whole token the no_fabricated_ids rule asks about.
_WHOLE_MOBILE = re.compile(r"(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}")
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

# A number's digits and what may stand between them; find_pii looks only around these.
_CLUSTER = re.compile(r"[\d(（+][\d \-.()（）+]*", re.ASCII)
_NON_DIGIT = re.compile(r"\D", re.ASCII)
# Tried only where a run of digits starts (the look-behind comes after the first digit, so
# the search skips to digits quickly); possessive separators never backtrack.
_NUMBER_HINT = re.compile(r"\d(?<!\d\d)(?:[ \-.()（）+]{0,3}+\d){10}", re.ASCII)
_SEVEN_DIGITS = re.compile(r"\d(?<!\d\d)\d{6}", re.ASCII)
# The same two tests on ASCII text: bytes.translate marks digits ``#`` and everything else
# ``.`` (deleting the separators _NUMBER_HINT allows, for the first), and a substring search
# finds the runs, in two C passes instead of a regex attempt at every digit.
_DIGITS_MARKED = bytes(35 if 48 <= byte <= 57 else 46 for byte in range(256))
_HINT_SEPARATORS = b" -.()+"
_LEAD_ROOM = 16
"""Characters kept before a cluster: room for ``+86``, ``电话是：`` or ``phone: ``."""
_EMAIL_ROOM = (64, 256)
"""Characters an email may take before its ``@`` (a local part's most) and after it."""
_NUMBER_KINDS = frozenset({"phone", "id_card", "bank_card", "landline"})
_SEPARATORS = re.compile(r"[^0-9Xx]")


@functools.cache
def _unfolded_tests() -> tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...]]:
    """_NUMBER_HINT, _SEVEN_DIGITS and the ``@`` on text as written: each digit and separator
    class also matches the characters read as one (full-width ``１``), and the ``@`` comes in
    each of its forms (``＠``), so the prefilter tests a text outside ASCII without folding it
    first."""
    digit, separator = forms_of("0123456789"), forms_of(" -.+()（）")
    hint = re.compile(rf"{digit}(?<!{digit}{digit})(?:{separator}{{0,3}}+{digit}){{10}}")
    seven = re.compile(rf"{digit}(?<!{digit}{digit}){digit}{{6}}")
    return hint, seven, tuple(forms_of("@")[1:-1])


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
    """The value as the text writes it (``１３９１２３４５６７８`` in full-width digits)."""
    start: int
    end: int
    plain: str
    """The value in its compatibility forms (``13912345678``): what it is compared by."""

    @property
    def masked(self) -> str:
        """The value with its middle hidden, safe to show in a report."""
        if self.kind == "email":
            local, _, domain = self.plain.partition("@")
            return f"{local[:1]}***@{domain}"
        digits = _SEPARATORS.sub("", self.plain)
        if self.kind == "phone":
            digits = digits[-11:]  # without the +86 country code
        return digits[:3] + "*" * max(len(digits) - 7, 4) + digits[-4:]

    @property
    def label(self) -> str:
        """What it is, in words."""
        return _LABELS[self.kind]


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
    """The stretches of ``text`` (folded) where a number ``find_pii`` looks for may stand.

    Every such number has at least eleven digits (a mobile, a landline with its area code, an
    ID or card number), written together or apart by spaces, hyphens, dots, brackets or a
    ``+``, except a landline of seven digits or more after a word such as 电话. A stretch runs
    from the cluster (from room for that word before it, in the second list) to the two
    characters after it; the patterns' look-behinds still see the text before a stretch.
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


def _email_windows(text: str) -> list[tuple[int, int]]:
    """The stretches around each ``@`` of ``text`` where an email may stand."""
    windows: list[tuple[int, int]] = []
    before, after = _EMAIL_ROOM
    at = text.find("@")
    while at != -1:
        _extend(windows, (max(at - before, 0), at + after))
        at = text.find("@", at + 1)
    return windows


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

    It looks (in the text's compatibility forms) for eleven digits with at most three
    separators between any two, for seven digits in a row and a word such as 电话
    (landlines), and for an ``@``.
    """
    chosen = set(kinds)
    numbers = _NUMBER_KINDS.intersection(chosen)
    landline = "landline" in chosen
    email = "email" in chosen

    def may_hold(text: str) -> bool:
        if len(text) < 3:
            return False  # too short for an email, let alone seven digits
        if text.isascii():
            if email and "@" in text:
                return True
            if len(text) < 7:
                return False
            raw = text.encode("ascii")
            # Eleven digits apart only by separators are needed for a _NUMBER_HINT match; the
            # regex then decides, so the answer is the regex's. ``find``, not ``in``: a bytes
            # ``in`` first tries its operand as an integer and builds a TypeError for it.
            if (
                numbers
                and raw.translate(_DIGITS_MARKED, _HINT_SEPARATORS).find(b"###########") >= 0
                and _NUMBER_HINT.search(text) is not None
            ):
                return True
            if not landline or raw.translate(_DIGITS_MARKED).find(b"#######") < 0:
                return False
        else:
            hint, seven, at = _unfolded_tests()
            if email and any(sign in text for sign in at):
                return True
            if numbers and hint.search(text) is not None:
                return True
            if not landline or seven.search(text) is None:
                return False
            text = compatibility_forms(text)  # ``ＴＥＬ`` is a word such as tel
        lower = text.lower()
        return any(word in lower for word in LEAD_WORDS)

    return may_hold


def find_pii(text: str, kinds: tuple[PiiKind, ...] | list[PiiKind] = PII_KINDS) -> list[PiiHit]:
    """Every piece of personal data of the given kinds in ``text``, in order of position.

    ``text`` is read in its compatibility forms (full-width digits as ASCII digits); each
    hit's ``start`` and ``end`` are positions in ``text`` itself, and its ``text`` is what
    ``text`` holds there.
    """
    plain = compatibility_forms(text)
    hits: list[PiiHit] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    def add(kind: PiiKind, start: int, end: int) -> None:
        hits.append(PiiHit(kind, text[start:end], start, end, plain[start:end]))
        taken.append((start, end))

    windows, lead_windows = _windows(plain) if _NUMBER_KINDS.intersection(kinds) else ([], [])
    # ID cards first: an 18-digit ID would otherwise also be read as a card number.
    if "id_card" in kinds:
        for match in _matches(ID_CARD_18, plain, windows):
            if id_card_checksum_ok(_SEPARATORS.sub("", match.group(0))):
                add("id_card", *match.span())
        for match in _matches(ID_CARD_15, plain, windows):
            if old_id_card_ok(_SEPARATORS.sub("", match.group(0))) and free(*match.span()):
                add("id_card", *match.span())
    if "email" in kinds and "@" in plain:
        for match in _matches(EMAIL, plain, _email_windows(plain)):
            start = email_start(plain, match.start(), match.group(0).index("@") + match.start())
            if free(start, match.end()):
                add("email", start, match.end())
    if "phone" in kinds:
        for match in _matches(PHONE, plain, windows):
            if free(*match.span()):
                add("phone", *match.span())
    if "landline" in kinds:
        for match in _matches(LANDLINE_APART, plain, windows):
            if free(*match.span()):
                add("landline", *match.span())
        for match in _matches(LANDLINE_AFTER_WORD, plain, lead_windows):
            if free(*match.span("number")):
                add("landline", *match.span("number"))
    if "bank_card" in kinds:
        for match in _matches(CARD, plain, windows):
            digits = re.sub(r"[ -]", "", match.group(0))
            if card_prefix_ok(digits) and luhn_ok(digits) and free(*match.span()):
                add("bank_card", *match.span())
    return sorted(hits, key=lambda hit: hit.start)
