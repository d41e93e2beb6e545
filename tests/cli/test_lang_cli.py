"""``--lang``: the demo suite's run summary, gates and summary.md in Chinese when the reader
asks for it (the option, ``SEATRIAL_LANG``, ``language:``, the locale), English otherwise."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.demo._demo import SUITE as DEMO_SUITE
from seatrial.i18n import current_language

V2 = "python:seatrial.demo.agents:v2"
CJK = re.compile(r"[\u4e00-\u9fff\uff08\uff09\uff1a\uff0c]")
"""Chinese characters and full-width punctuation."""
NO_LANGUAGE = {"SEATRIAL_LANG": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}
"""The environment of a reader who chose nothing: English."""


def seatrial(*args: str, **environ: str | None):
    env = {"COLUMNS": "200", **NO_LANGUAGE, **environ}
    return CliRunner(env=env).invoke(app, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run_v2(*options: str, **environ: str | None):
    return seatrial(
        "run", str(DEMO_SUITE), "--agent", V2, "--report-dir", "v2", *options, **environ
    )


def _assert_chinese_run(result, project: Path) -> None:
    out = result.output
    assert result.exit_code == 1, out
    assert "失败    once-grant-second-write (P0) 越权（permission_violation）" in out
    assert "失败    read-missing-config (P1) 死循环（loop）" in out
    assert "共 14 次执行：11 次通过，3 次失败，0 次警告，0 次错误（通过率 78.6%" in out
    assert (
        "P0 p0_cases：2 个 P0 用例中 1 个通过，要求所有 P0 用例通过：未达标"
        "（once-grant-second-write 失败：越权（permission_violation））"
    ) in out
    assert (
        "suite min_pass_rate：78.6% [52.4%, 92.4%]（11/14 次执行），要求至少 90.0%：未达标" in out
    )
    assert "门禁未通过（2 项未达标）" in out
    assert "报告：v2/report.json" in out
    for english in ("gate not met", "attempts:", "UNMET", "needs", "reports:"):
        assert english not in out
    summary = (project / "v2" / "summary.md").read_text(encoding="utf-8")
    assert "14 个用例，14 次执行；**11 次通过**，3 次失败" in summary
    assert "门禁**未通过**" in summary
    assert "| 门禁 | 检查项 | 实测 | 要求 | 结论 |" in summary
    assert (
        "| suite | min_pass_rate | 78.6% [52.4%, 92.4%]（11/14 次执行） | 至少 90.0% | **未达标** |"
        in (summary)
    )
    assert "| `once-grant-second-write` | P0 | 失败 | 越权（permission_violation） |" in summary
    # report.json keeps the identifiers tools read
    report = json.loads((project / "v2" / "report.json").read_text(encoding="utf-8"))
    failing = {c["case_id"]: c for c in report["cases"] if c["verdict"] != "PASS"}
    assert failing["once-grant-second-write"]["verdict"] == "FAIL"
    assert failing["once-grant-second-write"]["attempts"][0]["failure_type"] == (
        "permission_violation"
    )
    assert [o["verdict"] for o in report["gate"]["outcomes"]] == ["unmet", "unmet"]


def test_run_with_lang_zh_prints_the_summary_reasons_and_gates_in_chinese(project):
    _assert_chinese_run(_run_v2("--lang", "zh"), project)


def test_run_under_a_chinese_locale_without_the_option_is_in_chinese(project):
    _assert_chinese_run(_run_v2(LANG="zh_CN.UTF-8"), project)


def test_run_of_a_project_whose_seatrial_yaml_says_zh_is_in_chinese(project):
    (project / "seatrial.yaml").write_text("project: p\nlanguage: zh-CN\n", encoding="utf-8")
    _assert_chinese_run(_run_v2(), project)


def test_lang_en_wins_over_a_chinese_locale_and_prints_english_only(project):
    result = _run_v2("--lang", "en", LANG="zh_CN.UTF-8", SEATRIAL_LANG="zh")
    assert result.exit_code == 1, result.output
    assert "FAIL    once-grant-second-write (P0) permission_violation" in result.output
    assert "gate not met (2 unmet)" in result.output
    assert "P0 p0_cases: 1 of 2 P0 cases pass, needs every P0 case passes: UNMET" in result.output
    assert not CJK.search(result.output)
    summary = (project / "v2" / "summary.md").read_text(encoding="utf-8")
    assert "Gate **NOT met**" in summary and not CJK.search(summary)


def test_without_any_choice_the_run_is_in_english(project):
    result = _run_v2()
    assert result.exit_code == 1, result.output
    assert "gate not met (2 unmet)" in result.output and not CJK.search(result.output)


def test_the_language_of_a_command_ends_with_it(project):
    assert _run_v2("--lang", "zh").exit_code == 1
    assert current_language() == "en"


def test_an_unknown_lang_is_bad_input_that_names_the_option_and_runs_nothing(project):
    result = _run_v2("--lang", "fr")
    assert result.exit_code == 2
    assert "--lang 'fr' is not a language Seatrial speaks; use en, zh" in result.output
    assert not (project / "v2").exists()


def test_an_unknown_seatrial_lang_is_bad_input_that_names_the_variable(project):
    result = _run_v2(SEATRIAL_LANG="de_DE")
    assert result.exit_code == 2
    assert "SEATRIAL_LANG 'de_DE' is not a language Seatrial speaks" in result.output


def test_an_unknown_locale_is_english_without_complaint(project):
    result = _run_v2(LANG="fr_FR.UTF-8")
    assert result.exit_code == 1 and "gate not met (2 unmet)" in result.output


def test_report_renders_a_stored_run_in_the_readers_language(project):
    assert _run_v2().exit_code == 1
    chinese = seatrial("report", "latest", "--format", "md", "--lang", "zh")
    assert chinese.exit_code == 0, chinese.output
    assert "门禁**未通过**" in chinese.output and "| 门禁 | 检查项 |" in chinese.output
    english = seatrial("report", "latest", "--format", "md")
    assert "Gate **NOT met**" in english.output and not CJK.search(english.output)


def test_demo_with_lang_zh_tells_its_story_in_chinese(project):
    result = seatrial("demo", "--lang", "zh", "--report-dir", "demo-report")
    assert result.exit_code == 0, result.output
    assert "Seatrial 演示：同一个工作区智能体，换模型前后对比" in result.output
    assert "门禁通过" in result.output and "门禁未通过（2 项未达标）" in result.output
    assert "v2 为什么失败（根据 trace 还原的执行轨迹）：" in result.output
    assert "once-grant-second-write 越权（permission_violation）" in result.output
