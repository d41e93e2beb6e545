"""Reasons kept as messages (an id and its parameters) read in whichever language renders
them, whatever the language they were made in."""

from __future__ import annotations

import json

from seatrial.i18n import english, phrased, phrased_plural, render, use_language


def test_a_message_reads_in_the_language_that_renders_it_not_the_one_it_was_made_in():
    with use_language("zh_CN"):
        said = phrased("{id}: {reason}", id="no-refund", reason="x")
    assert render(said) == "no-refund: x"
    assert render(said, language="zh_CN") == "no-refund：x"
    with use_language("zh_CN"):
        assert render(said) == "no-refund：x"


def test_nested_messages_and_lists_of_them_render_in_the_same_language():
    skipped = phrased("skipped: a hard constraint failed")
    said = phrased("{id}: {reason}", id="polite", reason=[skipped, skipped])
    assert english(said) == (
        "polite: skipped: a hard constraint failed; skipped: a hard constraint failed"
    )
    assert (
        render(said, language="zh_CN")
        == "polite：已跳过：有硬性约束未通过；已跳过：有硬性约束未通过"
    )


def test_a_plural_message_takes_the_form_its_count_asks_for():
    one = phrased_plural("its {n} assertion passed", "all {n} assertions passed", 1)
    three = phrased_plural("its {n} assertion passed", "all {n} assertions passed", 3)
    assert (english(one), english(three)) == ("its 1 assertion passed", "all 3 assertions passed")
    assert render(three, language="zh_CN") == "3 条断言全部通过"


def test_a_message_survives_json_as_stored():
    said = phrased(
        "{reason} (and {more} more)", reason=phrased("the case has no assertions"), more=2
    )
    stored = json.loads(json.dumps(said, ensure_ascii=False))
    assert render(stored, language="zh_CN") == "该用例没有断言（另有 2 项）"


def test_text_stored_before_messages_reads_as_written():
    assert render(None, "no_loop: read_file failed 8 times") == "no_loop: read_file failed 8 times"
    assert render({}, "as written") == "as written"


def test_a_message_a_reader_cannot_render_falls_back_to_its_text_instead_of_failing():
    # A newer writer's message with a placeholder this reader's parameters lack.
    broken = {"id": "{tool} was called {count}", "params": {"tool": "refund"}}
    assert render(broken, "refund was called twice") == "refund was called twice"
    assert render(broken) == "{tool} was called {count}"  # no text kept: the id, unfilled


def test_a_message_id_without_a_translation_reads_in_english_in_chinese():
    said = phrased("{n} widgets", n=2)
    assert render(said, language="zh_CN") == "2 widgets"
