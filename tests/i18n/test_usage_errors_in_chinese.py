"""The errors the command line's parser gives before a command runs (an unknown option or
command, a bad value, a missing argument), in the reader's language: SEATRIAL_LANG, --lang,
seatrial.yaml's language:; exit code 2 and the usage line kept; English exactly as Typer
writes it when nobody chose Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer import rich_utils
from typer.testing import CliRunner

from seatrial.cli import _usage, app
from seatrial.i18n import use_language
from tests.conftest import run_seatrial

SUITE = Path(__file__).resolve().parents[2] / "examples" / "booking" / "suites" / "single_turn.yaml"


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("SEATRIAL_LANG", "zh")


def error_lines(*args: str, cwd: Path) -> tuple[int, list[str]]:
    """``seatrial ARGS``'s exit code and the lines of its standard error, the panel's border
    taken off (a fresh process, 200 columns)."""
    done = run_seatrial(*args, cwd=cwd)
    assert done.stdout == ""
    lines = [line.strip(" │") for line in done.stderr.splitlines()]
    return done.returncode, lines


def test_a_value_out_of_range_with_seatrial_lang(tmp_path, chinese):
    code, lines = error_lines("run", "--repeats", "0", str(SUITE), cwd=tmp_path)
    assert code == 2
    assert lines[0] == "用法：seatrial run [OPTIONS] [SUITE]"
    assert lines[1] == "运行 'seatrial run --help' 查看帮助。"
    assert lines[2].startswith("╭─ 错误 ─")
    assert lines[3] == "'--repeats' 的值无效：应大于或等于 1"
    assert not any("Invalid" in line or "Usage" in line for line in lines)


def test_a_word_that_is_no_number_with_lang_zh(tmp_path):
    code, lines = error_lines("runs", "--lang", "zh", "--limit", "many", cwd=tmp_path)
    assert (code, lines[3]) == (2, "'--limit' 的值无效：应为整数")
    code, lines = error_lines("runs", "--lang=zh", "--limit", "0", cwd=tmp_path)
    assert (code, lines[3]) == (2, "'--limit' 的值无效：应大于或等于 1")


def test_an_unknown_option_with_the_nearest_ones(tmp_path):
    code, lines = error_lines("runs", "--lang", "zh", "--limt", "3", cwd=tmp_path)
    assert code == 2
    assert lines[:2] == ["用法：seatrial runs [OPTIONS]", "运行 'seatrial runs --help' 查看帮助。"]
    assert lines[3] == "没有这个选项：--limt（相近的选项：--limit、--suite）"
    code, lines = error_lines("runs", "--bogus", "--lang", "zh", cwd=tmp_path)
    assert (code, lines[3]) == (2, "没有这个选项：--bogus")


def test_an_unknown_command_with_the_nearest_ones(tmp_path, chinese):
    code, lines = error_lines("runz", cwd=tmp_path)
    assert code == 2
    assert lines[:2] == [
        "用法：seatrial [OPTIONS] COMMAND [ARGS]...",
        "运行 'seatrial --help' 查看帮助。",
    ]
    assert lines[3] == "没有命令 'runz'。你是不是想用 'run'、'runs'、'rerun'？"
    code, lines = error_lines("cases", "expnd", cwd=tmp_path)
    assert (code, lines[3]) == (2, "没有命令 'expnd'。你是不是想用 'expand'？")


def test_a_missing_argument_an_option_without_its_value_and_extra_words(tmp_path, chinese):
    code, lines = error_lines("validate", cwd=tmp_path)
    assert (code, lines[0], lines[3]) == (
        2,
        "用法：seatrial validate [OPTIONS] {PATH...}...",
        "缺少参数 'PATH...'。",
    )
    code, lines = error_lines("runs", "--limit", cwd=tmp_path)
    assert (code, lines[1]) == (2, "选项 '--limit' 需要一个值。")  # Typer gives no usage line
    code, lines = error_lines("runs", "extra", "words", cwd=tmp_path)
    assert (code, lines[3]) == (2, "多余的参数（extra words）")


def test_the_project_language_and_lang_over_seatrial_lang(tmp_path, monkeypatch):
    (tmp_path / "seatrial.yaml").write_text("project: p\nlanguage: zh\n", encoding="utf-8")
    code, lines = error_lines("runs", "--bogus", cwd=tmp_path)
    assert (code, lines[3]) == (2, "没有这个选项：--bogus")
    monkeypatch.setenv("SEATRIAL_LANG", "zh")
    code, lines = error_lines("runs", "--lang", "en", "--bogus", cwd=tmp_path)
    assert (code, lines[0], lines[3]) == (
        2,
        "Usage: seatrial runs [OPTIONS]",
        "No such option: --bogus",
    )
    code, lines = error_lines("runs", "--lang", "xx", "--bogus", cwd=tmp_path)  # not a language
    assert (code, lines[3]) == (2, "没有这个选项：--bogus")


ENGLISH = {
    ("run", "--repeats", "0", str(SUITE)): [
        "Usage: seatrial run [OPTIONS] [SUITE]",
        "Try 'seatrial run --help' for help.",
        "Invalid value for '--repeats': Input should be greater than or equal to 1",
    ],
    ("runs", "--limt", "3"): [
        "Usage: seatrial runs [OPTIONS]",
        "Try 'seatrial runs --help' for help.",
        "No such option: --limt (Possible options: --limit, --suite)",
    ],
    ("runz",): [
        "Usage: seatrial [OPTIONS] COMMAND [ARGS]...",
        "Try 'seatrial --help' for help.",
        "No such command 'runz'. Did you mean 'run', 'runs', 'rerun'?",
    ],
    ("validate",): [
        "Usage: seatrial validate [OPTIONS] {PATH...}...",
        "Try 'seatrial validate --help' for help.",
        "Missing argument 'PATH...'.",
    ],
}


def test_english_is_typers_own_when_nobody_chose_chinese(tmp_path):
    for args, (usage, try_help, message) in ENGLISH.items():
        code, lines = error_lines(*args, cwd=tmp_path)
        assert code == 2, args
        assert lines[:2] == [usage, try_help], args
        assert lines[2].startswith("╭─ Error ─"), args
        assert lines[3] == message, args
        assert len(lines) == 5, args


def test_a_chinese_error_in_process_leaves_typers_english_as_it_was():
    runner = CliRunner(env={"COLUMNS": "200", "SEATRIAL_LANG": None, "LANG": "C.UTF-8"})
    done = runner.invoke(app, ["runs", "--lang", "zh", "--bogus"])
    assert done.exit_code == 2 and "没有这个选项：--bogus" in done.output
    assert "用法：seatrial runs" in done.output
    assert (rich_utils.ERRORS_PANEL_TITLE, rich_utils.RICH_HELP) == (
        "Error",
        "Try [blue]'{command_path} {help_option}'[/] for help.",
    )
    done = runner.invoke(app, ["runs", "--bogus"])
    assert done.exit_code == 2 and "No such option: --bogus" in done.output
    assert "Usage: seatrial runs" in done.output and "Error" in done.output


def test_the_reader_language_comes_from_lang_before_the_environment(monkeypatch):
    monkeypatch.setenv("SEATRIAL_LANG", "en")
    assert _usage.reader_language(["runs", "--lang", "zh"]) == "zh_CN"
    assert _usage.reader_language(["runs", "--lang=zh-CN"]) == "zh_CN"
    assert _usage.reader_language(["runs", "--", "--lang", "zh"]) == "en"
    assert _usage.reader_language(["runs", "--lang"]) == "en"
    monkeypatch.setenv("SEATRIAL_LANG", "zh")
    assert _usage.reader_language(["runs", "--lang", "nope"]) == "zh_CN"


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("Input should be less than or equal to 65535", "应小于或等于 65535"),
        ("Input should be greater than 0", "应大于 0"),
        ("Input should be a valid number, unable to parse string as a number", "应为数字"),
        (
            "Input should be a valid integer, got a number with a fractional part",
            "应为整数，不能带小数",
        ),
        ("Input should be 'pass' or 'fail'", "应为 'pass' 或 'fail'"),
        ("Input should be 'a', 'b' or 'c'", "应为 'a'、'b' 或 'c'"),
        ("Value error, 'x' is not one of 'a', 'b'.", "'x' 不是可选值之一（'a', 'b'）。"),
        ("File 'a.yaml' does not exist.", "文件 'a.yaml' 不存在。"),
        ("'a.yaml': Permission denied", "'a.yaml': Permission denied"),  # the OS's own words
    ],
)
def test_a_values_complaint_in_a_fixed_form_is_translated_any_other_quoted(english, chinese):
    with use_language("zh"):
        assert _usage._phrase(english, _usage._VALUE_PHRASES) == chinese
