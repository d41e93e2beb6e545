"""seatrial.pii: reading text in its compatibility forms, hits placed in the original text,
and the prefilter that lets callers skip the search."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seatrial.pii import (
    ALL_PII_KINDS,
    card_prefix_ok,
    compatibility_forms,
    find_pii,
    pii_prefilter,
)

READ_AS_ASCII = set("0123456789@.-+_%* abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def test_every_character_whose_nfkc_form_the_finder_reads_is_read_as_that_form() -> None:
    # Checked against this Python's own Unicode data, so a newer Unicode that adds such a
    # character fails here instead of leaving its digits unread. Past the Basic
    # Multilingual Plane (mathematical digits) characters are read as written, on purpose.
    missed = []
    for code in range(0x80, 0x10000):
        char = chr(code)
        form = unicodedata.normalize("NFKC", char)
        if form in READ_AS_ASCII and compatibility_forms(f"x{char}") != f"x{form}":
            missed.append(f"U+{code:04X}")
    assert missed == []


def test_compatibility_forms_keep_length_and_leave_chinese_punctuation_alone() -> None:
    text = "手机：１３９　１２３４　５６７８（客服）＠⑩㈱𝟏"
    folded = compatibility_forms(text)
    assert folded == "手机：139 1234 5678（客服）@⑩㈱𝟏"
    assert len(folded) == len(text)


def test_a_hit_in_full_width_digits_is_placed_and_written_as_the_text_has_it() -> None:
    text = "请拨打１３９１２３４５６７８或发邮件"
    [hit] = find_pii(text)
    assert (hit.kind, hit.start, hit.end) == ("phone", 3, 14)
    assert hit.text == "１３９１２３４５６７８" == text[hit.start : hit.end]
    assert hit.plain == "13912345678"
    assert hit.masked == "139****5678"


def test_landlines_are_found_only_when_asked_for_in_every_new_form() -> None:
    text = "座机 021-6234-5678，总机 +86-10-62345670"
    assert find_pii(text) == []
    assert [hit.plain for hit in find_pii(text, ["landline"])] == [
        "021-6234-5678",
        "+86-10-62345670",
    ]


@pytest.mark.parametrize(
    ("digits", "card"),
    [
        ("4111111111111111", True),  # Visa, 16
        ("378282246310005", True),  # American Express, 15
        ("6222021234567890128", True),  # UnionPay, 19
        ("9558801234567890123", True),  # a domestic 9558 card, 19
        ("36227206271667", True),  # Diners Club, 14
        ("41111111111114", False),  # 14 digits, not Diners Club
        ("4222222222222", False),  # 13 digits: never a card
        ("1733542845123457", False),  # starts with 1: epoch microseconds
        ("0012345678901234", False),
        ("7012345678901234", False),
    ],
)
def test_card_numbers_need_a_card_length_and_issuer_prefix(digits: str, card: bool) -> None:
    assert card_prefix_ok(digits) is card


WIDE_ALPHABET = "0123456789１３９＠@.．-－ _a电话：（）x+\u3000"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=WIDE_ALPHABET, max_size=60))
def test_the_prefilter_never_rules_out_a_text_with_something_to_find(text: str) -> None:
    for kinds in (ALL_PII_KINDS, ("phone",), ("email",), ("landline",)):
        if find_pii(text, kinds):
            assert pii_prefilter(kinds)(text), (text, kinds)
