"""What masking finds in Chinese production text (issue 21): every form a privacy officer
would mask is masked, and every look-alike (timestamps, waybills, request ids, order
numbers) is kept, as a whole string, inside text, as an integer and in span event names."""

from __future__ import annotations

import json

import pytest

from seatrial.dataset import Masker
from seatrial.trace import Span, SpanEvent, Trace

ID_18 = "110101199003071233"  # Beijing, 7 March 1990; its GB 11643 checksum is 3
ID_15 = "110101900307123"  # the pre-1999 form of a Beijing ID: 7 March 1990, no checksum
EPOCH_MS = "1733542845123"  # 2024-12-07 03:40:45.123 UTC in milliseconds; passes Luhn
CARD_16 = "4111111111111111"  # a Visa test number; passes Luhn


def masked(text: str) -> str:
    return Masker().mask_text(text, "t")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 15-digit (pre-1999) ID numbers, and IDs written in groups of 6-8-4
        (f"身份证 {ID_15} 已登记", "身份证 <ID_CARD_1> 已登记"),
        ("身份证 110101 19900307 1233", "身份证 <ID_CARD_1>"),
        ("身份证 110101-19900307-1233。", "身份证 <ID_CARD_1>。"),
        ("身份证 110101 900307 123", "身份证 <ID_CARD_1>"),
        # full-width digits: a phone, an ID, a card; the text around is kept as written
        ("手机：１３９１２３４５６７８，谢谢", "手机：<PHONE_1>，谢谢"),
        ("身份证号１１０１０１１９９００３０７１２３３", "身份证号<ID_CARD_1>"),
        ("卡号４１１１１１１１１１１１１１１１", "卡号<BANK_CARD_1>"),
        ("手机 １３９－８７６５－４３２１", "手机 <PHONE_1>"),
        # emails with Chinese local parts or domains, and the full-width ＠
        ("邮箱 张三@例子.公司", "邮箱 <EMAIL_1>"),
        ("请发到张三@例子.公司，谢谢", "请发到<EMAIL_1>，谢谢"),
        ("邮箱是张三@例子.公司请查收", "邮箱是<EMAIL_1>请查收"),
        ("mail user@公司.中国 today", "mail <EMAIL_1> today"),
        ("联系 zhang.san＠example.com 即可", "联系 <EMAIL_1> 即可"),
        ("联系ｚｈａｎｇ＠ｅｘａｍｐｌｅ．ｃｏｍ", "联系<EMAIL_1>"),
        # landlines
        ("座机 021-6234-5678", "座机 <LANDLINE_1>"),
        ("座机 010-62345670", "座机 <LANDLINE_1>"),
        ("call +86-10-62345670 now", "call <LANDLINE_1> now"),
        ("办公室(021)62345678", "办公室<LANDLINE_1>"),
        ("office 0086 21 6234 5678", "office <LANDLINE_1>"),
        # mobiles written with dots, spaces, hyphens, a country code, right after Chinese
        ("手机 139.8765.4321", "手机 <PHONE_1>"),
        ("手机 139 8765 4321", "手机 <PHONE_1>"),
        ("手机 139-8765-4321", "手机 <PHONE_1>"),
        ("手机 +86 139 8765 4321", "手机 <PHONE_1>"),
        ("电话13912345678", "电话<PHONE_1>"),
        ("id-13912345678", "id-<PHONE_1>"),  # a hyphen is not a letter or digit
        # a real 16-digit card that passes Luhn is still a card
        (f"card {CARD_16}", "card <BANK_CARD_1>"),
        ("card SF 4111111111111111", "card SF <BANK_CARD_1>"),
    ],
)
def test_chinese_production_forms_are_masked(text: str, expected: str) -> None:
    assert masked(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"created_at {EPOCH_MS}",  # epoch milliseconds passing Luhn: a timestamp
        f"ts={EPOCH_MS}, next={EPOCH_MS}",
        "at 1733542845123457 us",  # 16 digits passing Luhn, starting with 1: microseconds
        "at 1733542845123456780 ns",  # 19 digits passing Luhn: nanoseconds
        "4222222222222",  # a 13-digit Visa-style number passing Luhn: 13 digits are no card
        "waybill SF1400000000001",  # letter-prefixed waybills
        "waybill JD0012345678901",
        "waybill SF4111111111111111",  # the digits alone would be a card
        "request req-9f13912345678a",  # hex request ids with a mobile inside
        "request a13912345678b",
        "order ORD13912345678 paid",  # order numbers glued to letters
        "order A110101199003071233",
        "user_13912345678",  # an underscore joins a name
        "p=0.13912345678",  # decimals
        "amount 13912345678.50",
        "longitude 139.87654321",  # one dot: a decimal, not a dotted mobile
        "身份证 110101901307123",  # 15 digits whose birth date has month 13
        "编号 190101900307123",  # 15 digits whose province code 19 does not exist
        "version 1.2.3, build 2025.11.3",
    ],
)
def test_look_alikes_are_kept(text: str) -> None:
    assert masked(text) == text


def test_one_value_keeps_one_token_however_wide_or_grouped_it_is_written() -> None:
    text = "13912345678, １３９１２３４５６７８, 139.1234.5678"
    assert masked(text) == "<PHONE_1>, <PHONE_1>, <PHONE_1>"
    assert masked(f"{ID_18} / 110101 19900307 1233") == "<ID_CARD_1> / <ID_CARD_1>"
    assert masked("010-62345670 / +86-10-62345670") == "<LANDLINE_1> / <LANDLINE_1>"
    assert masked("a@b.cn / a＠b.cn") == "<EMAIL_1> / <EMAIL_1>"


def _trace(span: Span) -> Trace:
    return Trace(trace_id="t", spans=[span])


def test_integers_are_masked_only_when_they_are_personal_numbers() -> None:
    span = Span(
        trace_id="t",
        span_id="1",
        name="chat",
        start_time_unix_nano=1,
        attributes={
            "created_at_ms": int(EPOCH_MS),
            "created_at_us": 1733542845123457,
            "user.phone": 13912345678,
            "card": int(CARD_16),
        },
    )
    out = Masker().mask_trace(_trace(span)).trace.spans[0].attributes
    assert out == {
        "created_at_ms": int(EPOCH_MS),
        "created_at_us": 1733542845123457,
        "user.phone": "<PHONE_1>",
        "card": "<BANK_CARD_1>",
    }


def test_span_event_names_are_masked_and_findings_never_show_them() -> None:
    span = Span(
        trace_id="t",
        span_id="1",
        name="chat",
        start_time_unix_nano=1,
        events=[
            SpanEvent(name="sms sent to 13912345678", time_unix_nano=1, attributes={}),
            SpanEvent(name="retry", time_unix_nano=2, attributes={"at": EPOCH_MS}),
            SpanEvent(name="mail 张三@例子.公司", time_unix_nano=3, attributes={"ok": "a@b.cn"}),
        ],
    )
    masker = Masker()
    findings = masker.findings(_trace(span))
    result = masker.mask_trace(_trace(span))
    events = result.trace.spans[0].events
    assert [event.name for event in events] == ["sms sent to <PHONE_1>", "retry", "mail <EMAIL_1>"]
    assert events[1] is span.events[1]  # nothing to mask: the event as it was
    assert events[2].attributes == {"ok": "<EMAIL_2>"}
    assert result.counts == {"phone": 1, "email": 2}
    places = [finding.where for finding in findings]
    assert places == [
        "span 1 event name",
        "span 1 event name",
        "span 1 event mail <EMAIL_1> attribute ok",
    ]
    assert "13912345678" not in json.dumps([vars(f) for f in findings], ensure_ascii=False)
