"""The text checks' reasons read in Chinese and their English is what it was. They read replies,
not tool calls, so no result names a span."""

from __future__ import annotations

import pytest

from seatrial.i18n import render

from ._traces import check, context

REPLY = "Your order ORD1001 is booked"


def _zh(result) -> str:
    return render(result.message, language="zh_CN")


def _final(reply: str = REPLY):
    return context(responses=[reply])


def test_contains_reads_in_chinese_both_ways_for_the_final_reply_and_all_replies():
    missing = check("contains", _final(), value="refund")
    assert missing.reason == '"refund" not found in the final reply: "Your order ORD1001 is booked"'
    assert _zh(missing) == '最终回复中未找到 "refund"："Your order ORD1001 is booked"'
    assert missing.span_id is None
    found = check("contains", context(responses=["hi", REPLY]), value="ORD", target="all_responses")
    assert (found.reason, _zh(found)) == ('found "ORD" in the replies', '在所有回复中找到 "ORD"')


@pytest.mark.parametrize("kind", ["not_contains", "not_icontains"])
def test_a_forbidden_text_found_reads_in_chinese(kind):
    result = check(kind, _final(), value="order")
    assert result.reason == '"order" found in the final reply: "Your order ORD1001 is booked"'
    assert _zh(result) == '最终回复中出现了 "order"："Your order ORD1001 is booked"'
    absent = check(kind, _final(), value="refund")
    assert _zh(absent) == '最终回复中未出现 "refund"'


def test_contains_any_and_all_read_in_chinese():
    none = check("contains_any", _final(), value="refund, cancel")
    assert none.reason == (
        'none of ["refund", "cancel"] found in the final reply: "Your order ORD1001 is booked"'
    )
    assert _zh(none) == (
        '最终回复中未找到 ["refund", "cancel"] 中的任何一项："Your order ORD1001 is booked"'
    )
    some = check("contains_all", _final(), value=["order", "refund"])
    assert _zh(some) == '最终回复中未找到 ["refund"]："Your order ORD1001 is booked"'
    every = check("icontains_all", _final(), value="ORDER, BOOKED")
    assert (every.reason, _zh(every)) == (
        "all 2 values found in the final reply",
        "在最终回复中找到了全部 2 个值",
    )


def test_contains_all_of_one_value_says_it_was_found_instead_of_all_1_values():
    result = check("contains_all", _final(), value=["booked"])
    # English changed on purpose: it said "all 1 values found in the final reply".
    assert (result.reason, _zh(result)) == (
        'found "booked" in the final reply',
        '在最终回复中找到 "booked"',
    )


def test_equals_names_the_reply_that_differs_in_chinese():
    result = check("equals", context(responses=["42", "41"]), value=42, target="all_responses")
    assert result.reason == 'reply 2: is "41", expected "42"'
    assert _zh(result) == '第 2 条回复：为 "41"，应为 "42"'
    same = check("equals", _final("42"), value=42)
    assert (same.reason, _zh(same)) == ("equals 42", "等于 42")
    differs = check("not_equals", _final("42"), value=42)
    assert (differs.reason, _zh(differs)) == ("the final reply: equals 42", "最终回复：等于 42")


def test_equals_a_json_value_nests_the_mismatch_in_chinese():
    wrong = check("equals", _final('{"status": "open"}'), value={"status": "done"})
    assert wrong.reason == 'the final reply: `status`: expected "done", got "open"'
    assert _zh(wrong) == '最终回复：`status`：应为 "done"，实际为 "open"'
    prose = check("equals", _final("done"), value={"status": "done"})
    assert _zh(prose) == '最终回复：不是 JSON："done"'
    null = check("equals", _final("0"), value=None)
    assert _zh(null) == '最终回复：为 "0"，应为 JSON null'


def test_starts_with_reads_in_chinese_both_ways():
    result = check("starts_with", _final(), value="Hello")
    assert result.reason == 'the final reply: starts "Your order ORD1", expected "Hello"'
    assert _zh(result) == '最终回复：开头为 "Your order ORD1"，应以 "Hello" 开头'
    ok = check("starts_with", _final(), value="Your")
    assert _zh(ok) == '以 "Your" 开头'


def test_regex_reads_in_chinese_both_ways():
    matched = check("regex", _final(), value=r"ORD\d+")
    assert (matched.reason, _zh(matched)) == (
        '/ORD\\d+/ matched "ORD1001"',
        '/ORD\\d+/ 匹配到 "ORD1001"',
    )
    missing = check("regex", _final(), value="^Hello")
    assert _zh(missing) == '/^Hello/ 与最终回复不匹配："Your order ORD1001 is booked"'
    leaked = check("not_regex", _final(), value=r"ORD\d+")
    assert _zh(leaked) == '/ORD\\d+/ 匹配到 "ORD1001"'
    clean = check("not_regex", _final(), value="refund")
    assert _zh(clean) == "/refund/ 在最终回复中没有匹配"


def test_is_json_reads_in_chinese_and_keeps_the_parsers_words():
    prose = check("is_json", _final())
    assert prose.reason.startswith("the final reply: is not JSON (Expecting value")
    assert _zh(prose).startswith("最终回复：不是 JSON（Expecting value")
    bare = check("is_json", _final("{}"))
    assert (bare.reason, _zh(bare)) == ("is JSON", "是 JSON")
    schema = {"type": "object", "required": ["id"]}
    meets = check("is_json", _final('{"id": 1}'), value=schema)
    assert _zh(meets) == "是符合 schema 的 JSON"


def test_a_schema_reports_three_errors_and_how_many_more_in_chinese():
    schema = {"type": "object", "required": ["a", "b", "c", "d", "e"]}
    result = check("json_schema", _final("{}"), value=schema)
    assert result.reason == (
        "the final reply: does not meet the schema: 'a' is a required property; "
        "'b' is a required property; 'c' is a required property (and 2 more)"
    )
    assert _zh(result) == (
        "最终回复：不符合 schema：'a' is a required property；"
        "'b' is a required property；'c' is a required property（另有 2 项）"
    )
    where = check(
        "json_schema",
        _final('{"items": [1]}'),
        value={"properties": {"items": {"items": {"type": "string"}}}},
    )
    assert where.reason == (
        "the final reply: does not meet the schema: 1 is not of type 'string' at `items.0`"
    )
    assert _zh(where) == "最终回复：不符合 schema：1 is not of type 'string'（位置：`items.0`）"
    meets = check("json_schema", _final('{"a": 1}'), value={"type": "object"})
    assert _zh(meets) == "符合 schema"


def test_length_reads_in_chinese_and_says_one_character_in_the_singular():
    short = check("length", _final("x"), min=2)
    # English changed on purpose: it said "has 1 characters".
    assert short.reason == "the final reply: has 1 character, fewer than 2"
    assert _zh(short) == "最终回复：共 1 个字符，少于 2 个"
    long = check("length", context(responses=["ok", "x" * 12]), max=10, target="all_responses")
    assert long.reason == "reply 2: has 12 characters, more than 10"
    assert _zh(long) == "第 2 条回复：共 12 个字符，多于 10 个"
    within = check("length", _final("hello"), min=1, max=10)
    assert (within.reason, _zh(within)) == (
        "length within 1..10 characters",
        "长度在 1..10 个字符范围内",
    )
