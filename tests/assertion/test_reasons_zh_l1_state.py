"""side_effect's and expected_files' reasons read in Chinese and their English is what it was.

What they check (the final state, the workspace) belongs to no one tool call, so no result
names a span."""

from __future__ import annotations

from pathlib import Path

from seatrial.i18n import render

from ._traces import check, context

STATE = {"order": {"status": "pending", "id": "ORD1"}, "notified": "sms sent", "tags": ["a"]}


def _zh(result) -> str:
    return render(result.message, language="zh_CN")


def test_a_wrong_field_of_the_final_state_reads_in_chinese_and_names_no_span():
    ctx = context(final_state=STATE)
    result = check("side_effect", ctx, check="order", expected={"status": "confirmed"})
    assert result.reason == 'final_state.order: `status`: expected "confirmed", got "pending"'
    assert _zh(result) == 'final_state.order：`status`：应为 "confirmed"，实际为 "pending"'
    assert result.span_id is None
    right = check("side_effect", ctx, check="order", expected={"status": "pending"})
    assert (right.verdict, _zh(right)) == ("pass", "final_state.order 符合预期")


def test_a_missing_path_lists_the_keys_there_are_or_says_none_in_chinese():
    result = check("side_effect", context(final_state=STATE), check="order.total")
    assert result.reason == (
        "final_state.order.total does not exist (final state keys: order, notified, tags)"
    )
    assert _zh(result) == (
        "final_state.order.total 不存在（最终状态中的键：order, notified, tags）"
    )
    empty = check("side_effect", context(final_state={}), check="order")
    assert empty.reason == "final_state.order does not exist (final state keys: none)"
    assert _zh(empty) == "final_state.order 不存在（最终状态中的键：无）"


def test_contains_and_matches_read_in_chinese_both_ways():
    ctx = context(final_state=STATE)
    lacking = check("side_effect", ctx, check="notified", contains="email")
    assert lacking.reason == 'final_state.notified is "sms sent", which does not contain "email"'
    assert _zh(lacking) == 'final_state.notified 为 "sms sent"，不包含 "email"'
    holding = check("side_effect", ctx, check="notified", contains="sms")
    assert _zh(holding) == 'final_state.notified 包含 "sms"'
    unmatched = check("side_effect", ctx, check="notified", matches="^email")
    assert _zh(unmatched) == 'final_state.notified 为 "sms sent"，不匹配 /^email/'
    matched = check("side_effect", ctx, check="notified", matches="^sms")
    assert _zh(matched) == "final_state.notified 匹配 /^sms/"


def test_an_item_of_a_list_reads_in_chinese_both_ways():
    ctx = context(final_state={"orders": [{"id": 1, "status": "open"}]})
    found = check("side_effect", ctx, check="orders", expected={"id": 1})
    assert _zh(found) == 'final_state.orders 中有一项包含 {"id": 1}'
    missing = check("side_effect", ctx, check="orders", expected={"id": 2})
    assert missing.reason == (
        'no item of final_state.orders has {"id": 2} (found [{"id": 1, "status": "open"}])'
    )
    assert _zh(missing) == (
        'final_state.orders 中没有任何一项包含 {"id": 2}（实际为 [{"id": 1, "status": "open"}]）'
    )


def test_exists_false_reads_in_chinese_both_ways():
    ctx = context(final_state=STATE)
    there = check("side_effect", ctx, check="notified", exists=False)
    assert there.reason == 'final_state.notified exists ("sms sent") but should not'
    assert _zh(there) == 'final_state.notified 存在（"sms sent"），但不应存在'
    gone = check("side_effect", ctx, check="refunded", exists=False)
    assert (gone.verdict, _zh(gone)) == ("pass", "final_state.refunded 不存在")


def test_no_final_state_is_not_evaluated_and_says_what_to_do_in_chinese():
    result = check("side_effect", context(), check="order")
    assert result.verdict == "not_evaluated"
    assert result.reason == (
        "the agent reported no final state, so `order` cannot be checked "
        "(have the agent return `final_state`; see docs/agents.md)"
    )
    assert _zh(result) == (
        "智能体没有上报最终状态，无法检查 `order`"
        "（请让智能体返回 `final_state`，参见 docs/agents.md）"
    )


def test_workspace_files_read_in_chinese(tmp_path: Path):
    (tmp_path / "order.json").write_text('{"status": "pending"}', encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"status": ', encoding="utf-8")
    (tmp_path / "out").mkdir()
    ctx = context(workspace=tmp_path)
    wrong = check("side_effect", ctx, file="order.json", expected={"status": "done"})
    assert wrong.reason == 'file `order.json`: `status`: expected "done", got "pending"'
    assert _zh(wrong) == '文件 `order.json`：`status`：应为 "done"，实际为 "pending"'
    assert wrong.span_id is None
    absent = check("side_effect", ctx, file="receipt.pdf")
    assert absent.reason == "file `receipt.pdf` does not exist in the workspace"
    assert _zh(absent) == "文件 `receipt.pdf` 在工作区中不存在"
    kept = check("side_effect", ctx, file="order.json", exists=False)
    assert _zh(kept) == "文件 `order.json` 存在，但不应存在"
    folder = check("side_effect", ctx, file="out", contains="x")
    assert _zh(folder) == "文件 `out` 是文件夹，不是文件"
    broken = check("side_effect", ctx, file="broken.json", expected={"status": "done"})
    assert broken.reason.startswith("file `broken.json` is not valid JSON/YAML: ")
    assert _zh(broken).startswith("文件 `broken.json` 不是有效的 JSON/YAML：")


def test_a_file_without_a_workspace_is_not_evaluated_in_chinese():
    result = check("side_effect", context(), file="order.json")
    assert result.verdict == "not_evaluated"
    assert _zh(result) == (
        "本次执行没有工作区，无法检查文件 `order.json`（请为用例配置 `fixture`）"
    )
    files = check("expected_files", context(), expected=["README.md"])
    assert _zh(files) == "本次执行没有工作区，无法检查预期文件（请为用例配置 `fixture`）"


def test_expected_files_read_in_chinese_and_one_file_is_no_longer_all_1(tmp_path: Path):
    (tmp_path / "README.md").write_text("hi", encoding="utf-8")
    (tmp_path / "NOTES.md").write_text("hi", encoding="utf-8")
    ctx = context(workspace=tmp_path)
    missing = check("expected_files", ctx, expected=["README.md", "CHANGELOG.md", "src/*.py"])
    assert missing.reason == "missing from the workspace: CHANGELOG.md, src/*.py"
    assert _zh(missing) == "工作区中缺少：CHANGELOG.md, src/*.py"
    both = check("expected_files", ctx, expected=["README.md", "*.md"])
    assert (both.reason, _zh(both)) == ("all 2 expected files exist", "2 个预期文件全部存在")
    # English changed on purpose: it said "all 1 expected files exist".
    one = check("expected_files", ctx, expected=["README.md"])
    assert (one.reason, _zh(one)) == ("the expected file exists", "预期文件存在")
