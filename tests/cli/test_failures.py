"""``seatrial failures`` and ``seatrial report daily`` on a project whose run failed as planted."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.testing import FakeOpenAI
from tests.dataset.test_failures import CHINESE, FORMATS, PLANTED, run_suite

KEY_ENV = "SEATRIAL_TEST_NAMER_KEY"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("failures-cli")
    (folder / "seatrial.yaml").write_text("project: failures\n", encoding="utf-8")
    run_suite(folder, PLANTED, "planted")
    run_suite(folder, FORMATS, "formats")
    return folder


def invoke(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(project)
    monkeypatch.setenv(KEY_ENV, "sk-test-namer")
    db = f"sqlite:///{project / 'seatrial.db'}"
    return CliRunner(env={"COLUMNS": "220"}).invoke(app, [*args, "--db", db])


def test_failures_prints_one_row_per_cluster(project, monkeypatch):
    result = invoke(project, monkeypatch, "failures", "latest")

    assert result.exit_code == 0, result.output
    # latest is the formats run: one failure type, two different checks.
    assert "6 failed attempts in 2 clusters" in result.output
    assert "is_json failed" in result.output and "length failed" in result.output
    assert "format-json #" in result.output


def test_failures_format_json_is_the_json_the_older_flag_prints(project, monkeypatch):
    shared = invoke(project, monkeypatch, "failures", "latest", "--format", "json")
    older = invoke(project, monkeypatch, "failures", "latest", "--json")
    assert shared.exit_code == 0, shared.output
    assert json.loads(shared.stdout) == json.loads(older.stdout)
    assert json.loads(shared.stdout)["clusters"]


def test_failures_json_lists_every_member_of_the_three_planted_kinds(project, monkeypatch):
    formats = json.loads(invoke(project, monkeypatch, "failures", "latest", "--json").output)
    runs = invoke(project, monkeypatch, "runs", "--suite", "support")
    planted = next(line.split()[0] for line in runs.output.splitlines() if "support" in line)

    result = invoke(project, monkeypatch, "failures", planted, "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["run_id"] == planted != formats["run_id"]
    kinds = {c["failure_type"]: c for c in document["clusters"]}
    assert sorted(kinds) == ["hallucination", "loop", "permission_violation"]
    assert sorted({m["case_id"] for m in kinds["loop"]["members"]}) == [
        "loop-forecast",
        "loop-invoice",
        "loop-order",
    ]
    assert kinds["loop"]["count"] == 8
    assert kinds["loop"]["example"] in kinds["loop"]["members"]


def test_verbose_lists_members_and_their_first_divergence(project, monkeypatch):
    runs = invoke(project, monkeypatch, "runs", "--suite", "support")
    planted = next(line.split()[0] for line in runs.output.splitlines() if "support" in line)

    result = invoke(project, monkeypatch, "failures", planted, "-v")

    assert result.exit_code == 0, result.output
    assert "loop-order #2 FAIL: no_loop: `lookup_order` failed 4 times" in result.output
    assert "first divergence: extra step: lookup_order(" in result.output


def test_a_threshold_of_two_still_keeps_two_failed_checks_apart(project, monkeypatch):
    result = invoke(project, monkeypatch, "failures", "latest", "--threshold", "2")

    assert result.exit_code == 0, result.output
    # The formats run: one failure type, two checks; the loosest threshold cannot merge them.
    assert "6 failed attempts in 2 clusters" in result.output


def test_chinese_failures_of_two_checks_are_two_clusters_shown_as_written(tmp_path, monkeypatch):
    (tmp_path / "seatrial.yaml").write_text("project: chinese\n", encoding="utf-8")
    run_id = run_suite(tmp_path, CHINESE, "chinese")

    table = invoke(tmp_path, monkeypatch, "failures", run_id)
    result = invoke(tmp_path, monkeypatch, "failures", run_id, "--json")

    assert table.exit_code == 0, table.output
    assert "9 failed attempts in 2 clusters" in table.output
    assert 'contains value="工单号"' in table.output
    assert result.exit_code == 0, result.output
    assert "\\u" not in result.output
    checks = {
        c["check"]: {m["case_id"] for m in c["members"]}
        for c in json.loads(result.output)["clusters"]
    }
    assert checks == {
        'contains value="工单号"': {"ticket-repair", "ticket-complaint"},
        "is_json": {"json-status"},
    }


def test_failures_of_an_unknown_run_exit_2_saying_so(project, monkeypatch):
    result = invoke(project, monkeypatch, "failures", "no-such-run")

    assert result.exit_code == 2
    assert "no-such-run" in result.output


def test_name_with_asks_a_model_for_each_clusters_name(project, monkeypatch):
    def answer(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        return "Answers in prose" if "is_json" in prompt else "Replies far too long"

    with FakeOpenAI(answer) as server:
        config = project / "seatrial.yaml"
        original = config.read_text(encoding="utf-8")
        config.write_text(
            original + "models:\n  namer:\n    model: gpt-4o-mini-2024-07-18\n"
            f"    base_url: {server.base_url}\n    api_key_env: {KEY_ENV}\n",
            encoding="utf-8",
        )
        try:
            result = invoke(
                project, monkeypatch, "failures", "latest", "--json", "--name-with", "namer"
            )
        finally:
            config.write_text(original, encoding="utf-8")
        asked = len(server.requests)

    assert result.exit_code == 0, result.output
    names = sorted(c["name"] for c in json.loads(result.output)["clusters"])
    assert names == ["Answers in prose", "Replies far too long"]
    assert asked == 2


def test_daily_writes_the_markdown_and_html_report(project, monkeypatch, tmp_path):
    result = invoke(
        project,
        monkeypatch,
        "report",
        "daily",
        "--date",
        dt.date.today().isoformat(),
        "--output",
        str(tmp_path / "reports"),
    )

    assert result.exit_code == 0, result.output
    stem = f"daily-{dt.date.today().isoformat()}"
    markdown = (tmp_path / "reports" / f"{stem}.md").read_text(encoding="utf-8")
    assert "2 runs of 2 suites" in result.output
    assert "## Failure clusters" in markdown and "no_loop failed on" in markdown
    assert (tmp_path / "reports" / f"{stem}.html").exists()


def test_daily_with_a_date_that_is_not_one_exits_2(project, monkeypatch):
    result = invoke(project, monkeypatch, "report", "daily", "--date", "10/03/2026")

    assert result.exit_code == 2
    assert "--date '10/03/2026' is not a date: write it as YYYY-MM-DD" in result.output


def test_failures_with_lang_zh_prints_the_listing_in_chinese(project, monkeypatch):
    result = invoke(project, monkeypatch, "failures", "latest", "--lang", "zh")
    english = invoke(project, monkeypatch, "failures", "latest", "--lang", "en")

    assert result.exit_code == 0, result.output
    assert "：6 次执行失败，分为 2 类" in result.output
    assert _columns(result.output.splitlines()[1]) == [
        "#",
        "类型",
        "检查项",
        "次数",
        "标签",
        "示例",
    ]
    assert "格式不符（format）" in result.output
    # the labels are what the checks say, shown as written
    assert "is_json failed" in result.output and "length failed" in result.output
    assert "6 failed attempts in 2 clusters" in english.output
    header = english.output.splitlines()[1]
    assert _columns(header) == ["#", "type", "check", "count", "label", "example"]


def test_verbose_failures_in_chinese_name_the_verdict_and_the_divergence(project, monkeypatch):
    runs = invoke(project, monkeypatch, "runs", "--suite", "support")
    planted = next(line.split()[0] for line in runs.output.splitlines() if "support" in line)

    result = invoke(project, monkeypatch, "failures", planted, "-v", "--lang", "zh")

    assert result.exit_code == 0, result.output
    assert "loop-order #2 失败：" in result.output
    assert "首次分歧：" in result.output
    for english in ("FAIL:", "first divergence", "failed attempts"):
        assert english not in result.output


CLEAN = """suite: clean
cases:
  - {id: greeting, input: Hi, assertions: [{type: contains, value: help}]}
"""


def _columns(line: str) -> list[str]:
    return line.replace("┃", " ").split()


def test_a_run_with_no_failure_says_so_in_chinese(tmp_path, monkeypatch):
    (tmp_path / "seatrial.yaml").write_text("project: clean\n", encoding="utf-8")
    run_id = run_suite(tmp_path, CLEAN, "clean")

    chinese = invoke(tmp_path, monkeypatch, "failures", run_id, "--lang", "zh")
    english = invoke(tmp_path, monkeypatch, "failures", run_id, "--lang", "en")

    assert chinese.output == f"运行 {run_id}：没有失败的执行\n"
    assert english.output == f"run {run_id}: no attempt failed\n"
