"""docs/cli.md (and docs/zh/cli.md, its Chinese) is generated from the real command and must
not drift from it."""

from __future__ import annotations

from pathlib import Path

from seatrial.cli._reference import render_reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
DOC_ZH = DOC.parent / "zh" / "cli.md"


def test_cli_reference_matches_the_command():
    assert DOC.read_text(encoding="utf-8") == render_reference(), (
        "docs/cli.md is out of date: run `python -m seatrial.cli._reference > docs/cli.md`"
    )


def test_the_chinese_cli_reference_matches_the_commands_chinese_help():
    assert DOC_ZH.read_text(encoding="utf-8") == render_reference("zh_CN"), (
        "docs/zh/cli.md is out of date: run "
        "`python -m seatrial.cli._reference --lang zh > docs/zh/cli.md`"
    )


def test_the_chinese_reference_is_chinese_and_keeps_the_names_as_written():
    text = DOC_ZH.read_text(encoding="utf-8")
    assert "## `seatrial run`" in text and "| `--repeats` | 选项 | 每个用例跑 N 次" in text
    assert "Run every case N times" not in text


def test_every_command_is_documented():
    text = DOC.read_text(encoding="utf-8")
    for command in ("run", "validate", "runs", "report", "init", "demo"):
        assert f"## `seatrial {command}`" in text
