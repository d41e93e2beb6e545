"""`seatrial datasets` through the Typer app: import, list, show, history, retire, export, check."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.store import Store

SUITE = """
suite: refunds
cases:
  - {id: refund-1, input: 我要退款, category: 退款, priority: P0}
  - {id: refund-2, turns: [我要退款, 订单号 A1002], category: 退款, tags: [anti-hallucination]}
  - {id: order-1, input: 查一下我的订单, category: 查单}
"""


@pytest.fixture
def seatrial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refunds.yaml").write_text(SUITE, encoding="utf-8")

    def invoke(*args: str) -> Result:
        runner = CliRunner(env={"COLUMNS": "200", "USER": "qa-lead"})
        return runner.invoke(app, ["datasets", *args, "--db", url])

    return invoke, url


def test_import_creates_a_version_and_warns_about_composition_with_figures(seatrial) -> None:
    invoke, url = seatrial

    result = invoke("import", "refunds", "refunds.yaml", "--note", "first cut")

    assert result.exit_code == 0, result.output
    assert "refunds v1: 3 cases" in result.stdout
    assert "P0 cases are 33% of the set (1 of 3)" in result.stdout
    assert "multi-turn cases are 33% of the set (1 of 3)" in result.stdout
    assert "1 anti-hallucination cases; at least 10" in result.stdout
    with Store.open(url) as store:
        (version,) = store.golden_versions("refunds")
    assert (version.who, version.note) == ("qa-lead", "first cut")


def test_importing_the_same_file_again_changes_nothing(seatrial) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")

    result = invoke("import", "refunds", "refunds.yaml")

    assert result.exit_code == 0, result.output
    assert "refunds: no changes, still v1" in result.stdout


def test_retire_then_show_history_and_an_older_version(seatrial) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")

    retired = invoke("retire", "refunds", "order-1", "--reason", "查单 moved to its own set")
    now = invoke("show", "refunds")
    before = invoke("show", "refunds@1")
    history = invoke("history", "refunds")
    listed = invoke("list")

    assert retired.exit_code == 0, retired.output
    assert "refunds v2: retired order-1" in retired.stdout
    assert "refunds v2 of 2: 2 cases, 1 retired" in now.stdout
    assert "retired order-1: 查单 moved to its own set" in now.stdout
    # The retired case's category was covered before: now it is a gap.
    assert "category '查单' has no active cases" in now.stdout
    assert "refunds v1 of 2: 3 cases, 0 retired" in before.stdout and "order-1" in before.stdout
    rows = [
        line.replace("│", " ").split()
        for line in history.stdout.splitlines()
        if line[:2] in ("v1", "v2")
    ]
    assert [(row[0], *row[3:7]) for row in rows] == [
        ("v1", "qa-lead", "3", "0", "3"),
        ("v2", "qa-lead", "0", "1", "2"),
    ]
    assert "refunds" in listed.stdout and "v2" in listed.stdout


def test_check_takes_extra_categories_and_meets_requirements_quietly(seatrial, tmp_path) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")

    result = invoke("check", "refunds", "--category", "开票")

    assert result.exit_code == 0, result.output
    assert "refunds@1: 3 cases" in result.stdout
    assert "category '开票' has no active cases" in result.stdout
    lines = [
        f'{{"id": "c{n}", "turns": ["a", "b"], "priority": "P0", "tags": ["反幻觉"]}}'
        for n in range(10)
    ]
    (tmp_path / "good.jsonl").write_text("\n".join(lines), encoding="utf-8")
    invoke("import", "good", "good.jsonl")
    assert "every requirement met" in invoke("check", "good").stdout


def test_export_writes_a_file_that_imports_as_the_same_cases(seatrial, tmp_path) -> None:
    invoke, url = seatrial
    invoke("import", "refunds", "refunds.yaml")

    result = invoke("export", "refunds@1", "out.jsonl")
    again = invoke("import", "copy", "out.jsonl")

    assert result.exit_code == 0, result.output
    assert "wrote 3 cases of refunds@1 to out.jsonl" in result.stdout
    assert again.exit_code == 0, again.output
    with Store.open(url) as store:
        assert store.golden_snapshot("copy").cases == store.golden_snapshot("refunds").cases


def test_xlsx_export_of_cases_excel_cannot_hold_exits_2_unless_lossy(seatrial, tmp_path) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")

    refused = invoke("export", "refunds", "out.xlsx")
    lossy = invoke("export", "refunds", "out.xlsx", "--lossy")

    assert refused.exit_code == 2
    assert "cannot hold 1 of the cases (refund-2: input, turns)" in refused.stderr
    assert "--lossy" in refused.stderr
    assert lossy.exit_code == 0, lossy.output
    assert "lost in Excel: refund-2: input, turns" in lossy.stderr
    assert (tmp_path / "out.xlsx").is_file()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("show", "nope"), "no golden set 'nope'"),
        (("show", "refunds@9"), "versions 1 to 1, not 9"),
        (("show", "refunds@x"), "whole number"),
        (("history", "nope"), "no golden set 'nope'"),
        (("retire", "refunds", "ghost", "--reason", "gone"), "no active case 'ghost'"),
        (("import", "refunds", "missing.yaml"), "missing.yaml"),
    ],
)
def test_wrong_names_and_versions_exit_2_saying_what_exists(seatrial, args, said) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")

    result = invoke(*args)

    assert result.exit_code == 2, result.output
    assert said in result.stderr


def test_verify_passes_an_untouched_history_and_a_new_version(seatrial) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")
    invoke("retire", "refunds", "order-1", "--reason", "moved")

    result = invoke("verify")

    assert result.exit_code == 0, result.output
    assert "refunds: v1 to v2 verified" in result.stdout


def test_verify_names_a_case_edited_in_the_database_and_exits_1(seatrial) -> None:
    invoke, url = seatrial
    invoke("import", "refunds", "refunds.yaml")
    invoke("import", "orders", "refunds.yaml")
    with Store.open(url) as store, store.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE golden_changes SET definition = json_set(definition, '$.input', '我要投诉') "
            "WHERE dataset = 'refunds' AND case_id = 'refund-1'"
        )

    everything = invoke("verify")
    one = invoke("verify", "refunds")
    other = invoke("verify", "orders")

    assert everything.exit_code == 1, everything.output
    assert "refunds v1 case refund-1:" in everything.stderr
    assert "expected " in everything.stderr and "stored " in everything.stderr
    assert "orders: v1 to v1 verified" in everything.stdout
    assert one.exit_code == 1 and "refunds v1 case refund-1" in one.stderr
    assert other.exit_code == 0, other.output


def test_verify_of_an_unknown_set_exits_2_naming_the_known_ones(seatrial) -> None:
    invoke, _ = seatrial
    invoke("import", "refunds", "refunds.yaml")

    result = invoke("verify", "orders")

    assert result.exit_code == 2
    assert "known: refunds" in result.stderr


def _columns(line: str) -> list[str]:
    return line.replace("┃", " ").split()


def test_list_show_and_history_with_lang_zh_print_in_chinese(seatrial) -> None:
    invoke, _ = seatrial
    empty = invoke("list", "--lang", "zh")
    invoke("import", "refunds", "refunds.yaml")
    invoke("retire", "refunds", "order-1", "--reason", "查单 moved to its own set")

    listed = invoke("list", "--lang", "zh")
    shown = invoke("show", "refunds", "--lang", "zh")
    history = invoke("history", "refunds", "--lang", "zh")
    english = invoke("show", "refunds", "--lang", "en")

    assert empty.stdout == "还没有黄金集；用 `seatrial datasets import NAME FILE` 创建一个\n"
    assert _columns(listed.stdout.splitlines()[0]) == [
        "名称",
        "版本",
        "用例数",
        "更新时间",
        "更新人",
    ]
    assert "refunds v2（共 2 个版本）：2 个用例，1 个已停用" in shown.stdout
    assert _columns(shown.stdout.splitlines()[1]) == ["用例", "优先级", "类型", "类别", "对话轮次"]
    assert "已停用 order-1：查单 moved to its own set" in shown.stdout
    # the composition warning is Chinese too, the category as written
    assert "警告：分类 '查单' 没有在用的用例" in shown.stdout
    assert _columns(history.stdout.splitlines()[0]) == [
        "版本",
        "时间",
        "操作人",
        "新增",
        "停用",
        "用例数",
        "说明",
    ]
    assert "refunds v2 of 2: 2 cases, 1 retired" in english.stdout
    assert "warning: category '查单' has no active cases" in english.stdout
    assert _columns(english.stdout.splitlines()[1]) == [
        "case",
        "priority",
        "type",
        "category",
        "turns",
    ]


def test_check_that_meets_every_requirement_says_so_in_chinese(seatrial, tmp_path) -> None:
    invoke, _ = seatrial
    cases = "".join(
        f'{{"id": "c{n}", "turns": ["a", "b"], "priority": "P0", "tags": ["反幻觉"]}}\n'
        for n in range(10)
    )
    (tmp_path / "good.jsonl").write_text(cases, encoding="utf-8")
    invoke("import", "good", "good.jsonl")

    chinese = invoke("show", "good", "--lang", "zh")
    english = invoke("show", "good")

    assert "构成检查：各项要求均满足" in chinese.stdout
    assert "composition: every requirement met" in english.stdout
