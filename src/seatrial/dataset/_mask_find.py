"""Finding what masking replaces in one string: built-in kinds, custom patterns, listed names.

The built-in kinds come from :func:`seatrial.pii.find_pii`, the one owner of personal-data
detection; this module adds the configured lists and patterns and decides overlaps.

Speed matters (every ingested span passes through here), so a string is first tested against
one cheap regular expression: without eleven digits close together, an ``@``, a word such as
电话 before seven digits, or the first character of a listed name, none of the built-in kinds
or lists can match, and only custom patterns run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from seatrial.dataset._mask_settings import BUILTIN_MASK_KINDS, MaskSettings
from seatrial.pii import PiiKind, find_pii, pii_prefilter

_DIGIT_KINDS = frozenset({"id_card", "phone", "landline", "bank_card"})
SMALLEST_WHOLE_NUMBER = 1_000_000_000
"""Integers below this have fewer digits than any number masking looks for."""
_WORD_EDGE = re.compile(r"[A-Za-z0-9_]")
_NOT_KEY = re.compile(r"[^0-9Xx]")

# Overlapping hits: the lower rank wins. An ID card beats everything (18 digits that pass
# the checksum); a mobile beats a bank card (``+86 138 0013 8000`` is 13 digits and may pass
# Luhn by chance); digits beat an email (an ID number used as an email's local part); custom
# patterns beat the lists.
_RANK = {kind: rank for rank, kind in enumerate(("id_card", "phone", "landline", "bank_card"))}
_RANK["email"] = len(_RANK)
_CUSTOM_RANK = _RANK["email"] + 1
_LIST_RANK = _CUSTOM_RANK + 1


@dataclass(frozen=True)
class Hit:
    """One value to replace: where it is, its kind, and the key that gives its token."""

    kind: str
    start: int
    end: int
    key: str
    """The value written one way (digits only, lower case, full-width as ASCII), so that
    ``138-0013-8000``, ``１３８００１３８０００`` and ``13800138000`` share a token."""
    preview: str
    """The value with its middle hidden, safe to print."""


def hidden_middle(text: str) -> str:
    """``text`` with its middle hidden: a quarter (at most three characters) kept at each end,
    nothing kept of a text shorter than four characters."""
    keep = min(len(text) // 4, 3)
    if keep == 0:
        return "*" * len(text)
    return text[:keep] + "*" * (len(text) - 2 * keep) + text[len(text) - keep :]


def hidden_name(text: str) -> str:
    """A listed name or address with everything after its first character hidden."""
    return text[:1] + "*" * (len(text) - 1)


class Detector:
    """Finds every value to mask in a string, from one :class:`MaskSettings`."""

    def __init__(self, settings: MaskSettings) -> None:
        self._kinds: tuple[PiiKind, ...] = tuple(
            kind for kind in BUILTIN_MASK_KINDS if kind in settings.kinds
        )
        self._custom = [
            (pattern.name.lower(), re.compile(pattern.regex)) for pattern in settings.patterns
        ]
        self._lists, self._list_kind = _list_regex(settings)
        self._may_hold_pii = pii_prefilter(self._kinds)
        self._list_gate = None
        if self._list_kind:
            firsts = {entry[0] for entry in self._list_kind}
            firsts |= {char.upper() for char in firsts}
            chars = "".join(re.escape(char) for char in sorted(firsts))
            # JSON text may spell a listed name as \u escapes.
            self._list_gate = re.compile(rf"[{chars}]|\\u").search

    def may_hold(self, text: str) -> bool:
        """Whether ``text`` may hold a value to mask; False is certain, True only possible."""
        if self._custom:
            return True  # custom patterns have no cheap test
        if self._may_hold_pii(text):
            return True
        return self._list_gate is not None and self._list_gate(text) is not None

    @property
    def prefilters(self) -> bool:
        """Whether :meth:`may_hold` can ever say False (not with custom patterns)."""
        return not self._custom

    def may_hold_any(self, texts: list[str]) -> bool:
        """Whether any of ``texts`` may hold a value to mask, in one test over all of them.

        They are tested joined by NUL, which no pattern of the test matches: a match in one
        text is a match in the joined text (a look-behind at a text's start sees NUL, neither
        a digit nor a letter), so False here is False for each text alone. True may come
        from two texts together (seven digits in one, 电话 in another); the caller then
        tests each. ASCII texts and the others are joined apart: a text is in one of the two.
        """
        joined = "\x00".join(texts)
        if joined.isascii():
            return self.may_hold(joined)
        # Apart, so that the ASCII ones get the fast test (see seatrial.pii.pii_prefilter).
        ascii_texts = [text for text in texts if text.isascii()]
        others = [text for text in texts if not text.isascii()]
        return self.may_hold("\x00".join(ascii_texts)) or self.may_hold("\x00".join(others))

    def hits(self, text: str) -> list[Hit]:
        """The values to replace in ``text``, without overlaps, in order of position."""
        candidates: list[tuple[int, Hit]] = []
        if self._may_hold_pii(text):
            for pii in find_pii(text, self._kinds):
                key = _builtin_key(pii.kind, pii.plain)
                candidates.append(
                    (_RANK[pii.kind], Hit(pii.kind, pii.start, pii.end, key, pii.masked))
                )
        for match in self._lists.finditer(text) if self._lists is not None else ():
            value = match.group(0)
            key = value.casefold()
            kind = self._list_kind.get(key, "name")
            hit = Hit(kind, match.start(), match.end(), key, hidden_name(value))
            candidates.append((_LIST_RANK, hit))
        for name, regex in self._custom:
            for match in regex.finditer(text):
                if match.end() > match.start():
                    value = match.group(0)
                    hit = Hit(name, match.start(), match.end(), value, hidden_middle(value))
                    candidates.append((_CUSTOM_RANK, hit))
        if len(candidates) <= 1:
            return [hit for _, hit in candidates]
        return _without_overlaps(candidates)

    def whole_number(self, value: int) -> Hit | None:
        """The hit when an integer as a whole is a phone, ID card or bank card number."""
        if value < SMALLEST_WHOLE_NUMBER or not _DIGIT_KINDS.intersection(self._kinds):
            return None  # fewer digits than any number masking looks for
        text = str(value)
        found = [hit for hit in self.hits(text) if hit.kind in _DIGIT_KINDS]
        if len(found) == 1 and found[0].start == 0 and found[0].end == len(text):
            return found[0]
        return None


def _builtin_key(kind: str, plain: str) -> str:
    """The value written one way: an email in lower case; a number's digits, a mobile's
    without +86, a landline's with its area code's 0 in place of +86 or 0086."""
    if kind == "email":
        return plain.lower()
    digits = _NOT_KEY.sub("", plain).upper()
    if kind == "phone":
        return digits[-11:]
    if kind == "landline" and plain.startswith(("+", "00")):
        return "0" + digits.removeprefix("00")[2:]
    return digits


def _without_overlaps(candidates: list[tuple[int, Hit]]) -> list[Hit]:
    taken: list[Hit] = []
    for _, hit in sorted(candidates, key=lambda pair: (pair[0], pair[1].start, -pair[1].end)):
        if all(hit.end <= other.start or hit.start >= other.end for other in taken):
            taken.append(hit)
    return sorted(taken, key=lambda hit: hit.start)


def _list_regex(settings: MaskSettings) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One regular expression for every listed name and address, longest first, and the kind
    of each (by its case-folded text)."""
    kinds: dict[str, str] = {}
    for kind, entries in (("address", settings.addresses), ("name", settings.names)):
        for entry in entries:
            kinds.setdefault(entry.strip().casefold(), kind)
    kinds.pop("", None)
    if not kinds:
        return None, {}
    parts = []
    for entry in sorted(kinds, key=lambda text: (-len(text), text)):
        # Chinese names are written without spaces; a Latin name must stand as a whole word.
        before = r"(?<![A-Za-z0-9_])" if _WORD_EDGE.match(entry[0]) else ""
        after = r"(?![A-Za-z0-9_])" if _WORD_EDGE.match(entry[-1]) else ""
        parts.append(before + re.escape(entry) + after)
    return re.compile("|".join(parts), re.IGNORECASE), kinds
