"""``seatrial runs`` and ``seatrial validate`` in the reader's language: ``--lang``,
``SEATRIAL_LANG``, ``language:``; English when nobody chose, ``--format json`` unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from tests.dataset.test_failures import FORMATS, run_suite

NO_LANGUAGE = {"SEATRIAL_LANG": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}
"""The environment of a reader who chose nothing: English."""
SUITE = "suite: s\ncases:\n  - {id: x, input: hi}\n"


def seatrial(*args: str, **environ: str | None) -> Result:
    return CliRunner(env={"COLUMNS": "200", **NO_LANGUAGE, **environ}).invoke(app, list(args))


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs-lang")
    (folder / "seatrial.yaml").write_text("project: runs\n", encoding="utf-8")
    run_suite(folder, FORMATS, "formats")
    return folder


def _runs(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str, **environ: str) -> Result:
    monkeypatch.chdir(folder)
    return seatrial("runs", "--db", f"sqlite:///{folder / 'seatrial.db'}", *args, **environ)


def _header(result: Result) -> list[str]:
    return result.output.splitlines()[0].replace("┃", " ").split()


def test_runs_with_lang_zh_prints_the_table_headers_and_status_in_chinese(stored, monkeypatch):
    result = _runs(stored, monkeypatch, "--lang", "zh")

    assert result.exit_code == 0, result.output
    assert _header(result) == [
        "运行",
        "开始时间",
        "用例集",
        "智能体",
        "状态",
        "执行次数",
        "通过率",
        "标签",
    ]
    row = result.output.splitlines()[-1]
    assert "formats" in row and "已完成" in row and "finished" not in row


def test_runs_reads_seatrial_lang_and_stays_english_when_nobody_chose(stored, monkeypatch):
    chinese = _runs(stored, monkeypatch, SEATRIAL_LANG="zh")
    english = _runs(stored, monkeypatch)

    assert _header(chinese)[:2] == ["运行", "开始时间"]
    assert english.exit_code == 0, english.output
    assert _header(english) == [
        "run",
        "started",
        "suite",
        "agent",
        "status",
        "attempts",
        "pass",
        "rate",
        "tags",
    ]
    assert "finished" in english.output.splitlines()[-1]


def test_runs_format_json_keeps_its_keys_and_status_in_chinese(stored, monkeypatch):
    chinese = json.loads(_runs(stored, monkeypatch, "--format", "json", "--lang", "zh").output)
    english = json.loads(_runs(stored, monkeypatch, "--format", "json").output)

    assert chinese == english
    assert english[0]["status"] == "finished" and english[0]["suite"] == "formats"


def test_runs_with_none_stored_says_so_in_the_readers_language(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seatrial.yaml").write_text("project: empty\nlanguage: zh\n", encoding="utf-8")

    chinese = seatrial("runs")
    english = seatrial("runs", "--lang", "en")

    assert chinese.exit_code == 0, chinese.output
    assert chinese.output == "还没有保存的运行：试试 `seatrial demo`\n"
    assert english.output == "no runs stored yet: try `seatrial demo`\n"


def test_validate_with_lang_zh_counts_the_valid_files_in_chinese(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(SUITE, encoding="utf-8")

    two = seatrial("validate", "a.yaml", "b.yaml", "--lang", "zh")
    one = seatrial("validate", "a.yaml", SEATRIAL_LANG="zh")
    english = seatrial("validate", "a.yaml")
    english_two = seatrial("validate", "a.yaml", "b.yaml")

    assert two.exit_code == 0, two.output
    assert two.output == "通过：2 个文件有效\n"
    assert one.output == "通过：1 个文件有效\n"
    assert english.output == "ok: 1 file valid\n"
    assert english_two.output == "ok: 2 files valid\n"


def test_validate_counts_and_says_the_problems_in_chinese_quoting_what_was_written(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(
        "suite: bad\ncases:\n  - id: a\n    input: hi\n    repeats: three\n", encoding="utf-8"
    )

    chinese = seatrial("validate", "bad.yaml", "--lang", "zh")
    english = seatrial("validate", "bad.yaml")

    assert chinese.exit_code == english.exit_code == 2
    assert chinese.stderr.splitlines()[0] == "1 个问题："
    assert english.stderr.splitlines()[0] == "1 problem:"
    assert chinese.stderr.splitlines()[1:] == [
        "  bad.yaml:5：用例 `a`：`repeats` 应为整数（>= 1），实际为 'three'"
        "（修正：请写整数（>= 1），例如 `repeats: 3`）"
    ]
    assert english.stderr.splitlines()[1:] == [
        "  bad.yaml:5: case `a`: `repeats` must be a whole number >= 1, got 'three' "
        "(fix: write a whole number >= 1, e.g. `repeats: 3`)"
    ]


def test_validate_reads_the_locale_and_the_projects_language(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "seatrial.yaml").write_text("project: p\nlanguage: zh\n", encoding="utf-8")

    by_project = seatrial("validate", "a.yaml")
    by_option = seatrial("validate", "a.yaml", "--lang", "en")
    (tmp_path / "seatrial.yaml").write_text("project: p\n", encoding="utf-8")
    by_locale = seatrial("validate", "a.yaml", LANG="zh_CN.UTF-8")
    by_nothing = seatrial("validate", "a.yaml")

    assert by_project.output == "通过：1 个文件有效\n"
    assert by_option.output == "ok: 1 file valid\n"
    assert by_locale.output == "通过：1 个文件有效\n"
    assert by_nothing.output == "ok: 1 file valid\n"
