"""The L2 text assertions and their promptfoo spellings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from seatrial.assertion import aliases, lookup

from ._traces import check, context

REPLY = "已经帮您完成预约：清洁服务，明天上午 9:00，地址不变。"


@pytest.mark.parametrize(
    ("type_name", "params", "verdict"),
    [
        ("contains", {"value": "清洁服务"}, "pass"),
        ("contains", {"value": "退款"}, "fail"),
        ("not_contains", {"value": "退款"}, "pass"),
        ("not_contains", {"value": "预约"}, "fail"),
        ("icontains", {"value": "HELLO"}, "fail"),
        ("contains_any", {"value": ["退款", "预约"]}, "pass"),
        ("contains_any", {"value": "退款, 发票"}, "fail"),
        ("contains_all", {"value": ["清洁服务", "明天"]}, "pass"),
        ("contains_all", {"value": ["清洁服务", "后天"]}, "fail"),
        ("equals", {"value": REPLY}, "pass"),
        ("equals", {"value": REPLY + " "}, "fail"),
        ("starts_with", {"value": "已经"}, "pass"),
        ("starts_with", {"value": "好的"}, "fail"),
        ("regex", {"value": r"\d{1,2}:\d\d"}, "pass"),
        ("regex", {"value": r"^\d"}, "fail"),
        ("not_regex", {"value": r"1[3-9]\d{9}"}, "pass"),
        ("not_regex", {"value": "预约"}, "fail"),
        ("length", {"min": 10, "max": 100}, "pass"),
        ("length", {"max": 10}, "fail"),
        ("is_json", {}, "fail"),
    ],
)
def test_text_assertion_verdicts(type_name, params, verdict):
    assert check(type_name, context(response=REPLY), **params).verdict == verdict


def test_icontains_ignores_case():
    ctx = context(response="Your Order ORD-7 is CONFIRMED")
    assert check("icontains", ctx, value="confirmed").verdict == "pass"
    assert check("contains", ctx, value="confirmed").verdict == "fail"


def test_failure_reasons_quote_the_reply():
    result = check("contains", context(response=REPLY), value="退款")
    assert result.reason.startswith('"退款" not found in the final reply: "已经帮您')
    assert result.failure_type is None  # the type's own, `format`
    assert lookup("contains").failure_type == "format"


def test_all_responses_searches_every_reply():
    ctx = context(responses=["请问地址是？", "好的，已预约"])
    assert check("contains", ctx, value="地址").verdict == "fail"
    assert check("contains", ctx, value="地址", target="all_responses").verdict == "pass"
    leaked = check("not_contains", ctx, value="地址", target="all_responses")
    assert leaked.verdict == "fail"


def test_shape_checks_hold_for_each_reply_with_all_responses():
    ctx = context(responses=['{"ok": true}', "not json"])
    assert check("is_json", ctx).verdict == "fail"
    result = check("is_json", ctx, target="all_responses")
    assert result.verdict == "fail" and result.reason.startswith("reply 2: is not JSON")
    first = context(responses=["not json", '{"ok": true}'])
    assert check("is_json", first).verdict == "pass"


def test_json_schema_names_the_violation():
    schema = {
        "type": "object",
        "required": ["verdict", "confidence"],
        "properties": {"confidence": {"type": "number", "maximum": 1}},
    }
    ok = context(response='{"verdict": "PASS", "confidence": 0.92}')
    bad = context(response='{"verdict": "PASS", "confidence": 92}')
    assert check("json_schema", ok, value=schema).verdict == "pass"
    assert check("is_json", ok, value=schema).verdict == "pass"
    result = check("json_schema", bad, value=schema)
    assert result.verdict == "fail"
    assert "does not meet the schema" in result.reason and "`confidence`" in result.reason


def test_equals_with_a_mapping_compares_parsed_json():
    ctx = context(response='{"b": 2, "a": 1}')
    assert check("equals", ctx, value={"a": 1, "b": 2}).verdict == "pass"
    assert check("equals", ctx, value={"a": 1}).verdict == "fail"


def test_regex_ignore_case():
    ctx = context(response="Booking CONFIRMED")
    assert check("regex", ctx, value="confirmed").verdict == "fail"
    assert check("regex", ctx, value="confirmed", ignore_case=True).verdict == "pass"


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("not-contains", "not_contains"),
        ("contains-any", "contains_any"),
        ("contains-all", "contains_all"),
        ("starts-with", "starts_with"),
        ("not-regex", "not_regex"),
        ("is-json", "is_json"),
        ("json-schema", "json_schema"),
    ],
)
def test_promptfoo_spellings_are_aliases(alias, canonical):
    assert aliases()[alias] == canonical
    assert lookup(alias).name == canonical


def test_a_number_value_is_compared_as_text():
    assert check("contains", context(response="共 42 件"), value=42).verdict == "pass"


@pytest.mark.parametrize(
    ("type_name", "params"),
    [
        ("contains", {}),
        ("contains", {"value": "x", "target": "first_response"}),
        ("regex", {"value": "("}),
        ("json_schema", {"value": {"type": "nonsense"}}),
        ("length", {}),
        ("length", {"min": 5, "max": 2}),
        ("contains", {"value": "x", "threshold": 0.5}),
    ],
)
def test_invalid_text_parameters_are_rejected(type_name, params):
    with pytest.raises(ValidationError):
        check(type_name, context(), **params)
