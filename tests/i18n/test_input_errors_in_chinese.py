"""Bad input files and options, said in the reader's language: the problems of a suite (with
their file, line and fix), the errors a command stops on, the line of Seatrial's own bug; the
same exit codes, and English as before when nobody chose Chinese."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner, Result

from seatrial.case import load_suite
from seatrial.cli import app
from seatrial.errors import Problem, SuiteError
from seatrial.i18n import gettext, use_language

NO_LANGUAGE = {"SEATRIAL_LANG": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}
"""The environment of a reader who chose nothing: English."""

BAD_SUITE = """\
suite: bad
defaults:
  repeat: 3
cases:
  - id: a
    input: hi
    limits: {tool_calls: -1}
  - id: a
    input: again
    assertions:
      - type: tool_caled
        expected: refund
"""


def seatrial(*args: str, **environ: str | None) -> Result:
    return CliRunner(env={"COLUMNS": "200", **NO_LANGUAGE, **environ}).invoke(app, list(args))


@pytest.fixture
def bad_suite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD_SUITE, encoding="utf-8")
    return tmp_path / "bad.yaml"


CHINESE_PROBLEMS = [
    "  bad.yaml:3：`defaults` 中有未知字段 `repeat`；是不是想写 `repeats`？"
    "（修正：改名为 `repeats`）",
    "  bad.yaml:7：用例 `a`：`limits.tool_calls` 应为整数（>= 0），实际为 -1"
    "（修正：请写整数（>= 0），例如 `tool_calls: 3`）",
    "  bad.yaml:8：用例 id `a` 重复（第 5 行已用过）"
    "（修正：给每个用例一个独立的 `id`；运行之间按 `id` 逐个用例对比）",
]
ENGLISH_PROBLEMS = [
    "  bad.yaml:3: unknown field `repeat` in `defaults`; did you mean `repeats`? "
    "(fix: rename it to `repeats`)",
    "  bad.yaml:7: case `a`: `limits.tool_calls` must be a whole number >= 0, got -1 "
    "(fix: write a whole number >= 0, e.g. `tool_calls: 3`)",
    "  bad.yaml:8: duplicate case id `a` (first used on line 5) "
    "(fix: give each case its own `id`; runs are compared case by case through it)",
]


def test_validate_says_each_problem_in_chinese_with_its_line_and_fix(bad_suite):
    chinese = seatrial("validate", "bad.yaml", "--lang", "zh")

    assert chinese.exit_code == 2
    lines = chinese.stderr.splitlines()
    assert lines[0] == "4 个问题："
    assert lines[1:4] == CHINESE_PROBLEMS
    # The unknown assertion type: the sentence in Chinese, the type names as written.
    assert lines[4].startswith(
        "  bad.yaml:11：用例 `a`：未知的断言类型 `tool_caled`；是不是想写 `tool_called`？已知类型："
    )
    assert "tool_called, tool_not_called" in lines[4]
    assert lines[4].endswith("（修正：改为 `tool_called`）")


def test_validate_in_english_is_unchanged(bad_suite):
    english = seatrial("validate", "bad.yaml")

    assert english.exit_code == 2
    lines = english.stderr.splitlines()
    assert lines[0] == "4 problems:"
    assert lines[1:4] == ENGLISH_PROBLEMS
    assert lines[4].startswith(
        "  bad.yaml:11: case `a`: unknown assertion type `tool_caled`; did you mean "
        "`tool_called`? known types: "
    )
    assert lines[4].endswith(" (fix: change it to `tool_called`)")


def test_seatrial_lang_chooses_chinese_for_the_problems_too(bad_suite):
    chinese = seatrial("validate", "bad.yaml", SEATRIAL_LANG="zh")

    assert chinese.exit_code == 2
    assert chinese.stderr.splitlines()[1:4] == CHINESE_PROBLEMS


def test_run_on_a_bad_suite_says_invalid_input_in_chinese(bad_suite):
    chinese = seatrial("run", "bad.yaml", "--agent", "python:nothing:here", "--lang", "zh")
    english = seatrial("run", "bad.yaml", "--agent", "python:nothing:here")

    assert chinese.exit_code == english.exit_code == 2
    assert chinese.stderr.splitlines()[0] == "输入有误（4 个问题）："
    assert chinese.stderr.splitlines()[1:4] == CHINESE_PROBLEMS
    assert english.stderr.splitlines()[0] == "invalid input (4 problems):"
    assert english.stderr.splitlines()[1:4] == ENGLISH_PROBLEMS


def test_a_file_that_is_not_there_and_a_yaml_syntax_error_read_in_chinese(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.yaml").write_text("cases:\n  - id: a\n   input: [x\n", encoding="utf-8")

    missing = seatrial("validate", "missing.yaml", "--lang", "zh")
    broken = seatrial("validate", "broken.yaml", "--lang", "zh")

    assert missing.exit_code == broken.exit_code == 2
    assert missing.stderr.splitlines()[1] == (
        "  missing.yaml：文件不存在（修正：检查路径和所在文件夹）"
    )
    problem = broken.stderr.splitlines()[1]
    assert problem.startswith("  broken.yaml:")
    assert "YAML 语法错误：" in problem
    assert "（修正：检查这一行和上一行的缩进与引号；" in problem
    assert "`[`、`{` 开头时，要加引号）" in problem


def test_an_option_refused_before_the_project_is_read_is_said_in_chinese(tmp_path, monkeypatch):
    """``--format`` is checked before the command reads seatrial.yaml and sets the language
    itself: the error still follows ``--lang``."""
    monkeypatch.chdir(tmp_path)

    chinese = seatrial("runs", "--format", "xml", "--lang", "zh")
    from_environment = seatrial("runs", "--format", "xml", SEATRIAL_LANG="zh")
    english = seatrial("runs", "--format", "xml")

    assert chinese.exit_code == from_environment.exit_code == english.exit_code == 2
    assert chinese.stderr == "错误：未知格式 'xml'：请使用以下之一：text, json\n"
    assert from_environment.stderr == chinese.stderr
    assert english.stderr == "error: unknown format 'xml': use one of text, json\n"


def test_a_bad_date_and_a_bad_backend_are_said_in_chinese(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    date = seatrial("report", "daily", "--date", "31/03/2026", "--lang", "zh")
    backend = seatrial("run", "x.yaml", "--backend", "spark", "--lang", "zh")

    assert date.exit_code == backend.exit_code == 2
    assert date.stderr == (
        "错误：--date '31/03/2026' 不是日期：请写成 YYYY-MM-DD，例如 2026-03-31\n"
    )
    assert backend.stderr == "错误：--backend spark：只能选 local 或 celery\n"


def test_a_language_seatrial_does_not_speak_is_still_refused_by_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    refused = seatrial("runs", "--lang", "fr")
    refused_environment = seatrial("runs", SEATRIAL_LANG="de")

    assert refused.exit_code == refused_environment.exit_code == 2
    assert "--lang 'fr' is not a language Seatrial speaks" in refused.stderr
    assert "'de' is not a language Seatrial speaks" in refused_environment.stderr


def test_seatrials_own_bug_is_said_in_chinese_with_exit_3(bad_suite, monkeypatch):
    def broken(paths):
        raise RuntimeError("boom [x]")

    monkeypatch.setattr("seatrial.case.validate_paths", broken)

    chinese = seatrial("validate", "bad.yaml", "--lang", "zh")
    english = seatrial("validate", "bad.yaml")

    assert chinese.exit_code == english.exit_code == 3
    assert chinese.stderr.splitlines() == [
        "Seatrial 自身出错：RuntimeError: boom [x]",
        "这是 Seatrial 的缺陷，请连同你运行的命令一起反馈给我们。",
    ]
    assert english.stderr.splitlines() == [
        "Seatrial itself failed: RuntimeError: boom [x]",
        "This is a bug in Seatrial; please report it with the command you ran.",
    ]


def test_load_suite_says_its_problems_in_the_language_set(bad_suite):
    with use_language("zh_CN"), pytest.raises(SuiteError) as raised:
        load_suite(bad_suite)
    with pytest.raises(SuiteError) as in_english:
        load_suite(bad_suite)

    chinese, english = raised.value.problems[0], in_english.value.problems[0]
    assert (chinese.line, chinese.message, chinese.fix) == (
        3,
        "`defaults` 中有未知字段 `repeat`；是不是想写 `repeats`？",
        "改名为 `repeats`",
    )
    assert english.message == "unknown field `repeat` in `defaults`; did you mean `repeats`?"


def test_a_problem_is_framed_in_the_language_it_is_said_in():
    problem = Problem("suite.yaml", 4, "m", "f")

    assert str(problem) == "suite.yaml:4: m (fix: f)"
    assert problem.said() == str(problem)
    with use_language("zh_CN"):
        assert problem.said(gettext) == "suite.yaml:4：m（修正：f）"
        assert Problem("suite.yaml", None, "m").said(gettext) == "suite.yaml：m"
        assert str(problem) == "suite.yaml:4: m (fix: f)"


def test_an_invalid_assertion_argument_reads_in_chinese(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(
        "cases:\n"
        "  - id: a\n"
        "    input: hi\n"
        "    assertions:\n"
        "      - {type: regex, value: '(unclosed'}\n"
        "      - {type: length}\n",
        encoding="utf-8",
    )

    chinese = seatrial("validate", "s.yaml", "--lang", "zh")

    assert chinese.exit_code == 2
    lines = chinese.stderr.splitlines()
    assert lines[0] == "2 个问题："
    assert lines[1].startswith(
        "  s.yaml:5：用例 `a`：断言 `regex`：`value`：正则表达式 '(unclosed' 无效："
    )
    assert lines[2] == (
        "  s.yaml:6：用例 `a`：断言 `length`：需要设置 `min`、`max` 或两者都设"
        "（修正：修改该值，使其满足：需要设置 `min`、`max` 或两者都设）"
    )


def test_a_simulated_case_that_also_writes_input_is_a_problem_not_dropped(tmp_path, monkeypatch):
    """It used to vanish from the suite without a word: its model error mentions `input`, and
    the loader skipped such errors as reported already."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sim.yaml").write_text(
        "cases:\n"
        "  - id: a\n"
        "    input: hi\n"
        "    user_simulator: {persona: p, goal: g}\n"
        "  - {id: b, input: hello}\n",
        encoding="utf-8",
    )

    english = seatrial("validate", "sim.yaml")
    chinese = seatrial("validate", "sim.yaml", "--lang", "zh")

    assert english.exit_code == chinese.exit_code == 2
    assert english.stderr.splitlines()[1] == (
        "  sim.yaml:2: case `a`: a case with `user_simulator` has no `input` or `turns`: the "
        "simulator writes the user's messages (give `user_simulator.opening` for a fixed first "
        "one) (fix: remove `input` and `turns`, or remove `user_simulator`)"
    )
    assert chinese.stderr.splitlines()[1].endswith(
        "（修正：删除 `input` 和 `turns`，或删除 `user_simulator`）"
    )
