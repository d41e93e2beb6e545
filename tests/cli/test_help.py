"""The commands' help: in the reader's language (SEATRIAL_LANG, seatrial.yaml's `language:`,
the locale), English as it was, and every line whole when it does not go to a terminal."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from babel.messages.pofile import read_po
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.cli._help import HELP_OPTION, TYPER_WORDS, USAGE, help_language, translated
from seatrial.i18n import LOCALE_DIR, use_language

NO_LANGUAGE: dict[str, str | None] = {
    "SEATRIAL_LANG": None,
    "LC_ALL": None,
    "LC_MESSAGES": None,
    "LANG": "C.UTF-8",
    "TTY_COMPATIBLE": None,
    "FORCE_COLOR": None,
    "COLUMNS": "80",
}
"""An environment that names no language and no terminal: English help, off a terminal."""

GATES_EN = (
    "Release gates for this run (else the suite's gates:, else seatrial.yaml's); stored with "
    "the run when it starts. With no gate written anywhere, every case must pass."
)
GATES_ZH = (
    "本次运行的发布门禁（否则用用例集的 gates:，再否则用 seatrial.yaml 的）；"
    "运行开始时随运行一起保存。哪里都没写门禁时，要求所有用例通过。"
)
"""``seatrial run --gates``'s help as shown (Markdown drops the backticks), in both languages."""


@pytest.fixture(autouse=True)
def _no_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no seatrial.yaml says a language here


def helped(*args: str, **env: str | None) -> str:
    done = CliRunner().invoke(app, [*args, "--help"], env={**NO_LANGUAGE, **env})
    assert done.exit_code == 0, done.output
    return done.output


def visible(text: str) -> str:
    """``text`` without the colours a terminal's help has."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def flat(text: str) -> str:
    """``text`` without its panels' borders and line breaks: the words as they read."""
    return re.sub(r"[\s│╭╮╰╯─]+", "", visible(text))


# -- the reader's language -----------------------------------------------------------------------


def test_a_commands_help_reads_in_chinese_when_seatrial_lang_says_zh():
    shown = helped("run", SEATRIAL_LANG="zh")
    assert "用智能体运行 SUITE；满足门禁退出 0，未满足退出 1，输入有误退出 2。" in shown
    assert "每个用例跑 N 次（pass^k 和各项比率按 N 计算）。" in shown
    assert "用法：seatrial run [OPTIONS] [SUITE]" in shown
    assert "─ 选项 ─" in shown and "─ 参数 ─" in shown and "[默认：local]" in shown
    assert "Run SUITE against an agent" not in shown
    assert "Run every case N times" not in shown
    assert "Usage:" not in shown and "Options" not in shown and "[default:" not in shown


def test_the_apps_help_lists_every_command_with_its_chinese_one_liner():
    shown = helped(SEATRIAL_LANG="zh-CN")
    assert "LLM 智能体回归测试与评估：运行用例集、存储执行轨迹、为发版把关。" in shown
    assert "列出已存储的运行，最新的在前。" in shown
    assert "只检查用例集文件，不运行；有问题时逐条列出并退出 2。" in shown
    assert "显示 Seatrial 的版本并退出。" in shown and "─ 命令 ─" in shown
    assert "List stored runs, newest first." not in shown
    assert "Regression-test and evaluate LLM agents" not in shown


def test_a_group_of_commands_lists_its_own_in_chinese():
    shown = helped("datasets", SEATRIAL_LANG="zh")
    assert "黄金集：有名字、有版本、只增不改的用例集合，运行会记下所用版本。" in shown
    assert "列出各黄金集及其最新版本和有效用例数。" in shown
    assert "List the golden sets" not in shown


def test_help_reads_the_projects_language_and_the_locale(tmp_path: Path):
    (tmp_path / "seatrial.yaml").write_text("project: demo\nlanguage: zh-CN\n", encoding="utf-8")
    assert "列出已存储的运行，最新的在前。" in helped("runs")
    assert "List stored runs, newest first." in helped("runs", SEATRIAL_LANG="en")
    (tmp_path / "seatrial.yaml").write_text("project: demo\n", encoding="utf-8")
    assert "List stored runs, newest first." in helped("runs")
    assert "列出已存储的运行，最新的在前。" in helped("runs", LANG="zh_CN.UTF-8")


def test_the_language_help_is_shown_in_comes_in_the_order_the_commands_read_it(tmp_path):
    project = tmp_path / "project"
    (project / "suites").mkdir(parents=True)
    (project / "seatrial.yaml").write_text('language: "zh"  # 中文\n', encoding="utf-8")
    inside = project / "suites"  # the nearest parent's seatrial.yaml is the project's
    assert help_language({}, inside) == "zh_CN"
    assert help_language({"SEATRIAL_LANG": "en"}, inside) == "en"
    assert help_language({"SEATRIAL_LANG": ""}, inside) == "zh_CN"  # set but empty: not set
    assert help_language({"LANG": "en_US.UTF-8"}, inside) == "zh_CN"  # the file wins
    assert help_language({"LANG": "zh_CN.UTF-8"}, tmp_path) == "zh_CN"
    assert help_language({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, tmp_path) == "en"
    assert help_language({}, tmp_path) == "en"


def test_a_language_seatrial_does_not_speak_still_gets_english_help(tmp_path):
    # The command itself says what is wrong with SEATRIAL_LANG; help is always shown.
    assert help_language({"SEATRIAL_LANG": "fr"}, tmp_path) == "en"
    (tmp_path / "seatrial.yaml").write_text("language: ja\n", encoding="utf-8")
    assert help_language({"LANG": "zh_CN.UTF-8"}, tmp_path) == "en"
    assert "List stored runs, newest first." in helped("runs", SEATRIAL_LANG="fr")


# -- English as it was --------------------------------------------------------------------------


def test_english_help_is_the_english_written_in_the_code():
    shown = helped("run")
    assert "Usage: seatrial run [OPTIONS] [SUITE]" in shown
    assert "Run SUITE against an agent; exit 0 when the gate is met, 1 when not, 2 on bad" in shown
    assert "─ Options ─" in shown and "─ Arguments ─" in shown and "[default: local]" in shown
    assert "Show this message and exit." in shown
    assert not re.search(r"[\u4e00-\u9fff]", shown)


def test_chinese_help_leaves_the_english_as_it_was_for_the_next_reader():
    before = [helped("run"), helped()]
    assert "用法" in helped("run", SEATRIAL_LANG="zh") and "命令" in helped(SEATRIAL_LANG="zh")
    assert [helped("run"), helped()] == before  # byte for byte


# -- whole lines off a terminal -----------------------------------------------------------------


def test_help_that_is_not_for_a_terminal_keeps_every_line_whole():
    lines = helped("run").splitlines()
    [gates] = [line for line in lines if "--gates" in line]
    assert GATES_EN in gates and len(gates.rstrip()) > 80
    [zh] = [line for line in helped("run", SEATRIAL_LANG="zh").splitlines() if "--gates" in line]
    assert GATES_ZH in zh


def test_help_for_a_terminal_fits_its_window():
    shown = visible(helped("run", TTY_COMPATIBLE="1"))
    assert all(len(line) <= 80 for line in shown.splitlines())
    assert GATES_EN not in shown  # wrapped
    assert re.sub(r"\s+", "", GATES_EN) in flat(shown)  # and whole once read


def test_chinese_help_in_a_narrow_terminal_wraps_without_cutting_a_word():
    shown = helped("run", SEATRIAL_LANG="zh", TTY_COMPATIBLE="1", COLUMNS="70")
    assert re.sub(r"\s+", "", GATES_ZH) in flat(shown)
    assert "…" not in shown


# -- every help text has its Chinese ------------------------------------------------------------


def shown_texts(command: Any) -> list[str]:
    """Every help text ``seatrial`` shows: each command's and group's, each parameter's."""
    texts = [command.help, command.short_help, *(getattr(p, "help", None) for p in command.params)]
    for sub in getattr(command, "commands", {}).values():
        texts += shown_texts(sub)
    return [text for text in texts if text]


def test_every_help_text_the_command_shows_has_a_chinese_translation():
    with (LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "seatrial.po").open("rb") as handle:
        catalog = read_po(handle)
    texts = shown_texts(typer.main.get_command(app))
    assert len(texts) > 250  # the walk reached the commands
    with use_language("zh_CN"):
        untranslated = [text for text in texts if translated(text) == text]
    assert untranslated == [], "mark them (help=N_(...)), `make catalogs`, translate them"
    for english in (HELP_OPTION, USAGE, *TYPER_WORDS):
        assert catalog.get(english) is not None and catalog.get(english).string


def test_help_written_without_its_mark_is_found():
    with use_language("zh_CN"):
        assert translated("Suite files to check.") == "要检查的用例集文件。"
        assert translated("Suite files to check, unmarked.") == "Suite files to check, unmarked."
