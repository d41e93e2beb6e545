"""Masking before storage: every kind, near-misses both ways, tokens, JSON values, settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from seatrial.config import load_config
from seatrial.dataset import Masker, MaskSettings
from seatrial.errors import ConfigError
from seatrial.pii import find_pii
from seatrial.trace import Span, SpanEvent, Trace

ID_CARD = "11010519491231002X"  # the GB 11643 example number; its checksum is X
BAD_ID = "110105194912310021"  # 18 digits, wrong checksum: an order number, say
CARD = "6222021234567890128"  # 19 digits, passes Luhn
BAD_CARD = "4111111111111112"  # 16 digits, fails Luhn


def masked(text: str, settings: MaskSettings | None = None) -> str:
    return Masker(settings).mask_text(text, "t")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("call 13800138000 now", "call <PHONE_1> now"),
        ("手机 +86 138-0013-8000", "手机 <PHONE_1>"),
        ("座机 010-62345678 转", "座机 <LANDLINE_1> 转"),
        ("office (0755)1234567", "office <LANDLINE_1>"),
        ("办公室 0755 12345678", "办公室 <LANDLINE_1>"),
        ("电话：01062345678", "电话：<LANDLINE_1>"),
        (f"身份证 {ID_CARD} 已登记", "身份证 <ID_CARD_1> 已登记"),
        (f"card {CARD}", "card <BANK_CARD_1>"),
        ("card 4111 1111 1111 1111", "card <BANK_CARD_1>"),
        ("mail Zhang.San@Example.com.", "mail <EMAIL_1>."),
    ],
)
def test_each_built_in_kind_becomes_its_token(text: str, expected: str) -> None:
    assert masked(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"order {BAD_ID} shipped",  # 18 digits with a bad checksum
        f"ref {BAD_CARD}",  # 16 digits failing Luhn
        "order 20240511001 created",  # 11 digits, not a mobile prefix
        "on 2024-05-11 at 10:30, total ¥1,299.00",
        "amount 0755 1234567.50",  # a decimal after it: an amount
        "order 01012345678",  # an area code written together, no phone word
        "masked already: 138****8000 and z***@example.com",
        "model gpt-4o-2024-08-06, 1234 tokens",
    ],
)
def test_near_misses_are_kept(text: str) -> None:
    assert masked(text) == text


def test_the_no_pii_leak_default_kinds_still_leave_landlines_alone() -> None:
    assert find_pii("call 010-62345678") == []
    assert [hit.kind for hit in find_pii("call 010-62345678", ["landline"])] == ["landline"]


def test_one_value_keeps_one_token_within_a_trace_however_it_is_written() -> None:
    text = "13800138000, 138-0013-8000, +86 138 0013 8000, then 13912345678"
    assert masked(text) == "<PHONE_1>, <PHONE_1>, <PHONE_1>, then <PHONE_2>"


def trace(trace_id: str, *attribute_sets: dict[str, object]) -> Trace:
    spans = [
        Span(
            trace_id=trace_id,
            span_id=f"{index:016x}",
            name="execute_tool lookup",
            start_time_unix_nano=index,
            attributes=attributes,
        )
        for index, attributes in enumerate(attribute_sets)
    ]
    return Trace(trace_id=trace_id, spans=spans)


def test_tokens_follow_a_trace_across_batches_and_restart_in_another_trace() -> None:
    masker = Masker()
    first = masker.mask_trace(trace("a", {"q": "13800138000 and 13912345678"}))
    later = masker.mask_trace(trace("a", {"q": "again 13912345678, new 13700001111"}))
    other = masker.mask_trace(trace("b", {"q": "13700001111"}))
    assert first.trace.spans[0].attributes["q"] == "<PHONE_1> and <PHONE_2>"
    assert later.trace.spans[0].attributes["q"] == "again <PHONE_2>, new <PHONE_3>"
    assert other.trace.spans[0].attributes["q"] == "<PHONE_1>"
    assert first.counts == {"phone": 2}


def test_a_trace_evicted_from_memory_never_gives_two_values_one_token() -> None:
    masker = Masker(max_traces=1)
    masker.mask_trace(trace("a", {"q": "13800138000"}))
    masker.mask_trace(trace("b", {"q": "13800138000"}))  # pushes "a" out
    again = masker.mask_trace(trace("a", {"q": "13912345678"}))
    assert again.trace.spans[0].attributes["q"] == "<PHONE_2>"


def test_json_attribute_values_are_masked_inside_and_stay_valid_json() -> None:
    arguments = json.dumps(
        {"phone": "138-0013-8000", "id": ID_CARD, "note": ["ok", "mail a@b.cn"], "n": 13800138000}
    )
    result = Masker().mask_trace(trace("t", {"gen_ai.tool.call.arguments": arguments}))
    value = result.trace.spans[0].attributes["gen_ai.tool.call.arguments"]
    assert json.loads(value) == {
        "phone": "<PHONE_1>",
        "id": "<ID_CARD_1>",
        "note": ["ok", "mail <EMAIL_1>"],
        "n": "<PHONE_1>",
    }


def test_every_string_of_a_trace_is_masked_but_keys_and_other_numbers_are_not() -> None:
    span = Span(
        trace_id="t",
        span_id="1",
        name="call 13800138000",
        start_time_unix_nano=1,
        status="error",
        status_message=f"no account for {ID_CARD}",
        attributes={
            "13800138000": "key kept",
            "user.phone": 13800138000,
            "tokens": 1234,
            "flag": True,
            "list": ["a@b.cn", 7],
        },
        events=[SpanEvent(name="e", time_unix_nano=1, attributes={"to": "a@b.cn"})],
    )
    original = Trace(trace_id="t", spans=[span], resource={"user.email": "a@b.cn"})
    result = Masker().mask_trace(original)
    out = result.trace.spans[0]
    assert out.name == "call <PHONE_1>"
    assert out.status_message == "no account for <ID_CARD_1>"
    assert out.attributes == {
        "13800138000": "key kept",
        "user.phone": "<PHONE_1>",
        "tokens": 1234,
        "flag": True,
        "list": ["<EMAIL_1>", 7],
    }
    assert out.events[0].attributes == {"to": "<EMAIL_1>"}
    assert result.trace.resource == {"user.email": "<EMAIL_1>"}
    assert result.counts == {"phone": 2, "id_card": 1, "email": 3}
    assert original.spans[0].name == "call 13800138000"  # the input is left as it was


def test_tool_calls_read_from_a_masked_trace_show_the_masked_values() -> None:
    original = trace(
        "t",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.arguments": '{"phone": "13800138000"}',
        },
    )
    assert original.tool_calls()[0].arguments == {"phone": "13800138000"}  # fills the cache
    masked_trace = Masker().mask_trace(original).trace
    assert masked_trace.tool_calls()[0].arguments == {"phone": "<PHONE_1>"}


def test_listed_names_and_addresses_are_masked_longest_first() -> None:
    settings = MaskSettings(
        names=["张三", "张三丰", "Li Lei"], addresses=["中山路88号", "望京SOHO"]
    )
    text = "张三丰和张三住在中山路88号; li lei visits 望京soho, not Li Leia"
    assert masked(text, settings) == (
        "<NAME_1>和<NAME_2>住在<ADDRESS_1>; <NAME_3> visits <ADDRESS_2>, not Li Leia"
    )


def test_custom_patterns_get_their_own_tokens_and_lose_to_built_in_kinds() -> None:
    settings = MaskSettings(
        patterns=[{"name": "order", "regex": r"ORD-\d{6}"}, {"name": "digits", "regex": r"\d{11}"}]
    )
    assert masked("ORD-123456 for 13800138000", settings) == "<ORDER_1> for <PHONE_1>"


def test_built_in_kinds_can_be_switched_off() -> None:
    settings = MaskSettings(kinds=["email"])
    assert masked("13800138000 a@b.cn", settings) == "13800138000 <EMAIL_1>"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"patterns": [{"name": "order", "regex": "ORD-(\\d"}]}, "pattern 'order'"),
        ({"patterns": [{"name": "phone", "regex": "x"}]}, "built-in kind"),
        ({"patterns": [{"name": "o", "regex": "a*"}]}, "empty string"),
        ({"patterns": [{"name": "o", "regex": "a"}, {"name": "O", "regex": "b"}]}, "two patterns"),
    ],
)
def test_bad_patterns_are_refused_with_the_pattern_named(
    section: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        MaskSettings.model_validate(section)


def test_a_bad_regex_in_seatrial_yaml_names_the_file_line_and_pattern(tmp_path: Path) -> None:
    (tmp_path / "seatrial.yaml").write_text(
        "project: p\nmask:\n  names: [张三]\n  patterns:\n    - name: order\n"
        '      regex: "ORD-(\\\\d"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert "seatrial.yaml:" in message and "pattern 'order'" in message
    assert "mask:" in message and "ORD-(" not in message


def test_a_bad_name_entry_is_refused_without_showing_it(tmp_path: Path) -> None:
    (tmp_path / "seatrial.yaml").write_text("mask:\n  names: [张]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert "mask.names[0]" in str(caught.value) and "张" not in str(caught.value)


def test_the_mask_section_is_read_from_seatrial_yaml(tmp_path: Path) -> None:
    (tmp_path / "seatrial.yaml").write_text(
        "mask:\n  names: [王小明]\n  kinds: [phone]\n", encoding="utf-8"
    )
    settings = load_config(tmp_path).mask
    assert masked("王小明 13800138000 a@b.cn", settings) == "<NAME_1> <PHONE_1> a@b.cn"


def test_findings_hide_the_value_and_leave_the_masker_unchanged() -> None:
    masker = Masker()
    original = trace("t", {"args": '{"phone": "13800138000"}'}, {"q": f"id {ID_CARD}"})
    found = masker.findings(original)
    assert [(f.kind, f.where, f.preview, f.token) for f in found] == [
        ("phone", f"span {0:016x} attribute args $.phone", "138****8000", "<PHONE_1>"),
        ("id_card", f"span {1:016x} attribute q", "110***********002X", "<ID_CARD_1>"),
    ]
    later = masker.mask_trace(trace("t", {"q": "13912345678"}))
    assert later.trace.spans[0].attributes["q"] == "<PHONE_1>"  # findings took no number
