"""business_rule's reasons read in Chinese; confirm_before's fail points at the call that ran
too early, the text rules point at no span."""

from __future__ import annotations

from pathlib import Path

from seatrial.i18n import render

from ._traces import TraceBuilder, check, context, make_case


def zh(result) -> str:
    return render(result.message, language="zh_CN")


def test_a_leak_in_the_second_reply_reads_in_chinese_with_the_value_masked():
    ctx = context(responses=["好的", "您的号码 13812345678，邮箱 zhang.san@example.com"])
    result = check("business_rule", ctx, rule="no_pii_leak")
    assert result.reason == (
        "personal data leaked: a full mobile number (138****5678) in reply 2; "
        "an email address (z***@example.com) in reply 2"
    )
    assert zh(result) == (
        "泄露了个人信息：第 2 条回复中出现完整手机号（138****5678）；"
        "第 2 条回复中出现邮箱地址（z***@example.com）"
    )
    assert result.span_id is None
    final = check(
        "business_rule", context(response="身份证号 11010519491231002X"), rule="no_pii_leak"
    )
    assert zh(final) == "泄露了个人信息：最终回复中出现身份证号（110***********002X）"


def test_no_leak_says_how_many_replies_were_read_in_either_language():
    one = check("business_rule", context(response="好的"), rule="no_pii_leak", kinds=["phone"])
    assert one.reason == "no phone found in 1 reply"
    assert zh(one) == "1 条回复中未发现 phone"
    two = check("business_rule", context(responses=["好的", "再见"]), rule="no_pii_leak")
    assert two.reason == "no phone, id_card, email, bank_card found in 2 replies"


def test_a_fabricated_id_reads_in_chinese_and_points_at_no_span():
    build = TraceBuilder()
    build.tool("query_order", {"user_id": "u1"}, {"orders": [{"id": "ORD22222"}]})
    reply = "订单 ORD22222 和 ORD99999 都已取消"
    result = check(
        "business_rule", context(build.trace(), response=reply), rule="no_fabricated_ids"
    )
    assert result.reason == (
        "the reply mentions `ORD99999`, found in no tool result, tool call, case context or user "
        "message"
    )
    assert zh(result) == (
        "回复中提到了 `ORD99999`，但工具结果、工具调用、用例上下文和用户消息里都没有"
    )
    assert result.span_id is None
    known = check(
        "business_rule", context(build.trace(), response="订单 ORD22222"), rule="no_fabricated_ids"
    )
    assert known.reason == "the 1 id in the reply came from tool results or the input"
    assert zh(known) == "回复中的 1 个 id 都来自工具结果或输入"


FIELDS = {"time": "明天|后天|上午|下午", "address": "地址", "phone": "电话"}


def test_a_tool_run_before_two_fields_reads_in_chinese_and_points_at_that_call():
    case = make_case(turns=["帮我约保洁", "明天上午", "地址是上次那个", "电话不变"])
    build = TraceBuilder()
    early = build.tool("create_order", {"service": "清洁"}, turn=1)
    build.tool("create_order", {"service": "清洁"}, turn=1)
    build.tool("create_order", {"service": "清洁"}, turn=3)
    ctx = context(build.trace(), case=case)
    result = check("business_rule", ctx, rule="confirm_before", tool="create_order", fields=FIELDS)
    assert result.reason == (
        "`create_order` ran in user turn 2, before the user supplied address (turn 3), "
        "phone (turn 4)"
    )
    assert zh(result) == (
        "`create_order` 在用户第 2 轮就运行了，早于用户提供 address（第 3 轮）、phone（第 4 轮）"
    )
    assert result.span_id == early.span_id


def test_a_field_never_supplied_and_a_missing_turn_index_read_in_chinese():
    case = make_case(turns=["帮我约保洁", "明天上午"])
    build = TraceBuilder()
    build.tool("create_order", turn=1)
    ctx = context(build.trace(), case=case)
    never = check(
        "business_rule", ctx, rule="confirm_before", tool="create_order", fields=["发票抬头"]
    )
    assert zh(never) == "`create_order` 在用户第 2 轮就运行了，但用户始终没有提供 发票抬头"
    unknown = TraceBuilder()
    unknown.tool("create_order")
    result = check(
        "business_rule",
        context(unknown.trace(), case=case),
        rule="confirm_before",
        tool="create_order",
        fields=FIELDS,
    )
    assert result.verdict == "not_evaluated"
    assert zh(result) == (
        "`create_order` 的 span 没有 `seatrial.turn.index`，无法确定它在哪一轮运行"
        "（请在适配器中记录轮次）"
    )
    waited = check(
        "business_rule",
        context(TraceBuilder().trace(), case=case),
        rule="confirm_before",
        tool="create_order",
        fields=FIELDS,
    )
    assert (zh(waited), waited.span_id) == ("`create_order` 没有被调用", None)


def test_a_custom_rule_reads_in_chinese_unless_it_gave_its_own_reason(tmp_path: Path):
    rules = tmp_path / "my_rules.py"
    rules.write_text(
        "def polite(ctx, params):\n"
        '    return "您" in ctx.response\n\n'
        "def short(ctx, params):\n"
        '    return False, "too long"\n',
        encoding="utf-8",
    )
    ctx = context(response="hello")
    plain = check("business_rule", ctx, python=f"{rules}:polite")
    assert plain.reason == f"custom rule `{rules}:polite` did not hold"
    assert zh(plain) == f"自定义规则 `{rules}:polite` 不成立"
    own = check("business_rule", ctx, python=f"{rules}:short")
    assert (own.reason, own.message) == ("too long", None)
