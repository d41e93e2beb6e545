"""Excel suites (Question, Expected Skill/Task/Tool/Result columns), written with openpyxl."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from seatrial.case import load_suite, validate_paths
from seatrial.errors import SuiteError

HEADER = ["Question", "Expected Skill", "Expected Task", "Expected Tool", "Expected Result"]


def workbook(path: Path, rows: list[list[Any]], *, title_rows: int = 0) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for _ in range(title_rows):
        sheet.append([])
    for row in rows:
        sheet.append(row)
    book.create_sheet("ignored").append(["Question"])  # only the first sheet is read
    book.save(path)
    book.close()
    return path


def test_seed_002_columns_become_input_category_and_layered_assertions(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "import.xlsx",
        [
            HEADER,
            ["帮我约明天上午的清洁服务", "CreateOrder", "预约", "create_order", "告知预约成功"],
            ["我要退款", None, "退款", None, None],
        ],
    )
    suite = load_suite(path)
    assert suite.name == "import"
    booking, refund = suite.cases
    assert booking.id == "import-2"
    assert booking.input == "帮我约明天上午的清洁服务"
    assert booking.category == "预约"
    assert booking.source == "excel_import"
    assert booking.metadata["expected_task"] == "预约"
    skill, tool, result = booking.assertions
    assert (skill.type, skill.params, skill.must_pass) == (
        "skill_routed",
        {"expected": "CreateOrder"},
        False,
    )
    assert (tool.type, tool.params) == (
        "tool_called",
        {"expected": "create_order", "match": "prefix"},
    )
    assert (result.type, result.params) == ("semantic", {"criteria": "告知预约成功"})
    assert refund.id == "import-3"
    assert refund.assertions == []


def test_headers_match_case_insensitively_with_optional_columns(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "cases.xlsx",
        [
            ["id", "QUESTION", "expected_task", "Category", "Priority", "Tags", "Name", "Notes"],
            [101, "查订单", "查单", "订单", "P0", "回归, 订单", "查单-基础", "from incident 42"],
        ],
        title_rows=1,
    )
    (case,) = load_suite(path).cases
    assert case.id == "101"  # a numeric cell is read as the id text, not "101.0"
    assert case.category == "订单"  # an explicit Category wins over Expected Task
    assert case.metadata["expected_task"] == "查单"
    assert case.priority == "P0"
    assert case.tags == ["回归", "订单"]
    assert case.name == "查单-基础"
    assert case.metadata["Notes"] == "from incident 42"
    assert case.metadata["row"] == 3


def test_several_expected_tools_give_one_tool_called_each(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "t.xlsx", [["Question", "Expected Tool"], ["下单并支付", "create_order, pay"]]
    )
    (case,) = load_suite(path).cases
    assert [a.params["expected"] for a in case.assertions] == ["create_order", "pay"]


def test_row_problems_name_the_row(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "bad.xlsx",
        [
            ["ID", "Question", "Priority"],
            ["a", "ok", "P1"],
            ["b", None, "P1"],
            ["a", "dup", "P1"],
            ["c", "bad priority", "urgent"],
        ],
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    problems = caught.value.problems
    assert [p.line for p in problems] == [3, 4, 5]
    assert problems[0].message == "row 3: the Question cell is empty"
    assert problems[1].message == "duplicate case id `a` (first used on row 2)"
    assert problems[2].message == ("row 5: `priority` must be one of P0, P1, P2, got 'urgent'")
    assert str(problems[0]).startswith(f"{path}:3: row 3:")


def test_a_misspelt_header_is_reported_with_the_column_meant(tmp_path: Path) -> None:
    path = workbook(tmp_path / "h.xlsx", [["Question", "Expected Tol"], ["hi", "x"]])
    (problem,) = validate_paths([path])
    assert problem.line == 1
    assert problem.message == "row 1: unknown column `Expected Tol`; did you mean `Expected Tool`?"
    assert problem.fix == "rename the header to `Expected Tool`"


def test_a_sheet_without_a_question_column_is_refused(tmp_path: Path) -> None:
    path = workbook(tmp_path / "q.xlsx", [["Prompt", "Answer"], ["hi", "hello"]])
    (problem,) = validate_paths([path])
    assert "no `Question` column" in problem.message
    assert "`Prompt`" in problem.message


def test_a_file_that_is_not_a_workbook_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "fake.xlsx"
    path.write_text("Question,Expected Tool\n", encoding="utf-8")
    (problem,) = validate_paths([path])
    assert "cannot read the file as an Excel workbook" in problem.message


def test_without_openpyxl_the_problem_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workbook(tmp_path / "x.xlsx", [["Question"], ["hi"]])
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # makes `import openpyxl` fail
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    (problem,) = caught.value.problems
    assert problem.fix == 'pip install "seatrial[excel]"'
