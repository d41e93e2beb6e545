"""Alerts in the reader's language: the demo run with ``--lang zh`` (or a Chinese locale), as
a real process, posting to a local stand-in for a Feishu bot; the card it receives is Chinese,
and the same run without a language is the English card it always was. ``seatrial ci`` and
``seatrial nightly`` take the same ``--lang``: their alert and pull-request comment too."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.run._git import BRANCH_VARIABLES, COMMIT_VARIABLES, TARGET_VARIABLES
from tests.cli.test_alerts_cli import demo_project
from tests.cli.test_cli import SEATRIAL

SECRET = "SEC-feishu-signing-secret-7d21"
FEISHU = """
alerts:
  backoff_s: 0
  channels:
    lark:
      kind: feishu
      url: ${FEISHU_WEBHOOK}
      secret: ${FEISHU_SECRET}
"""
NO_LANGUAGE = {"SEATRIAL_LANG": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
"""A reader who chose nothing (an empty variable counts as not set): English."""
CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_SENTENCES = (
    "did not meet its gates",
    "failed its gates",
    "Unmet gates",
    "Failing cases",
    "pass rate",
    "(agent ",
    "Open in Seatrial",
)
"""The English message's own words; none may be left in the Chinese one."""


def run_seatrial(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``seatrial ARGS`` in ``project`` as a reader who chose no language, outside any CI
    (the CI's own branch variables would pick another baseline)."""
    ci_variables = (*BRANCH_VARIABLES, *COMMIT_VARIABLES, *TARGET_VARIABLES)
    clean = {k: v for k, v in os.environ.items() if k not in ci_variables}
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **clean,
            "COLUMNS": "200",
            "GIT_CEILING_DIRECTORIES": str(project.parent),
            **NO_LANGUAGE,
            **env,
        },
    )


def card(bot) -> dict:
    """The one card the bot accepted: its title, its Markdown and its fields."""
    assert bot.problems == []
    (seen,) = bot.accepted
    body = seen.body["card"]
    elements = body["elements"]
    return {
        "title": body["header"]["title"]["content"],
        "text": elements[0]["text"]["content"],
        "fields": [field["text"]["content"] for field in elements[1]["fields"]],
        "all": seen.text(),
    }


def _assert_chinese_card(received: dict) -> None:
    assert received["title"] == "Seatrial：workspace-agent 未通过门禁"
    text = received["text"]
    assert text.startswith("**workspace-agent** 的运行 `")
    assert "（智能体 python:seatrial.demo.agents:v2）未通过门禁。" in text
    assert "**未达标的门禁**" in text
    assert "**失败用例（3）**" in text
    # Each failing case with the verdict word and its failure type, named in Chinese with
    # the identifier gates and filters use.
    assert "- once-grant-second-write 失败（越权（permission_violation））：`" in text
    assert "- read-missing-config 失败（死循环（loop））：`" in text
    for case in EXPECTED_V2_FAILURES:
        assert case in text
    assert "**用例集**\nworkspace-agent" in received["fields"]
    assert any(f.startswith("**通过率**\n79%（共 14 次执行）") for f in received["fields"])
    for english in ENGLISH_SENTENCES:
        assert english not in received["all"], english


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "env"),
    [(("--lang", "zh"), {}), ((), {"LANG": "zh_CN.UTF-8"})],
    ids=["--lang zh", "LANG=zh_CN.UTF-8"],
)
def test_a_chinese_reader_s_run_sends_feishu_a_chinese_card(tmp_path, bot, options, env):
    feishu = bot("feishu", SECRET)
    project = demo_project(tmp_path, FEISHU)
    chat = {"FEISHU_WEBHOOK": feishu.url, "FEISHU_SECRET": SECRET, **env}

    run = ("run", "suites/workspace.yaml", "--agent", "v2", *options)
    done = run_seatrial(project, *run, env=chat)

    assert done.returncode == 1, done.stdout + done.stderr
    _assert_chinese_card(card(feishu))


@pytest.mark.slow
def test_without_a_language_the_feishu_card_is_the_english_one(tmp_path, bot):
    feishu = bot("feishu", SECRET)
    project = demo_project(tmp_path, FEISHU)

    done = run_seatrial(
        project,
        "run",
        "suites/workspace.yaml",
        "--agent",
        "v2",
        env={"FEISHU_WEBHOOK": feishu.url, "FEISHU_SECRET": SECRET},
    )

    assert done.returncode == 1, done.stdout + done.stderr
    received = card(feishu)
    assert received["title"] == "Seatrial: workspace-agent failed its gates"
    assert "(agent python:seatrial.demo.agents:v2) did not meet its gates." in received["text"]
    assert "**Unmet gates**" in received["text"]
    assert "- once-grant-second-write FAIL (permission_violation): `" in received["text"]
    assert "**pass rate**\n79% of 14 attempts" in received["fields"]
    assert not CJK.search(received["all"])


@pytest.mark.slow
def test_seatrial_ci_with_lang_zh_writes_a_chinese_comment_and_alerts_in_chinese(tmp_path, bot):
    feishu = bot("feishu", SECRET)
    project = demo_project(tmp_path, FEISHU)
    chat = {"FEISHU_WEBHOOK": feishu.url, "FEISHU_SECRET": SECRET}

    done = run_seatrial(
        project,
        "ci",
        "--tier",
        "pr",
        "--agent",
        "v2",
        "--comment",
        "comment.md",
        "--lang",
        "zh",
        env=chat,
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"workspace-agent：门禁未通过（运行 \S+，无基线）", done.stdout)
    assert "PR 评论：comment.md" in done.stdout
    comment = (project / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("<!-- seatrial ci pr -->\n## Seatrial：门禁**未通过**\n")
    assert "### workspace-agent：门禁**未通过**" in comment
    assert "没有基线：无从对比，因此不列回归。" in comment
    assert "#### 失败用例（3）" in comment
    assert "| 用例 | 分类 | 优先级 | 结论 | 失败类型 | 原因 |" in comment
    assert "| 失败 0/1 | 越权（permission_violation） |" in comment
    for english in ("No baseline", "Failing", "gates **NOT met**", "pass rate", "passed"):
        assert english not in comment, english
    _assert_chinese_card(card(feishu))


@pytest.mark.slow
def test_seatrial_nightly_reads_the_language_from_seatrial_yaml(tmp_path, bot):
    feishu = bot("feishu", SECRET)
    project = demo_project(tmp_path, FEISHU + "language: zh-CN\n")
    config = project / "seatrial.yaml"
    only_workspace = config.read_text(encoding="utf-8").replace(
        "suites: [suites/]", "suites: [suites/workspace.yaml]"
    )
    config.write_text(only_workspace, encoding="utf-8")

    done = run_seatrial(
        project,
        "nightly",
        "--agent",
        "v2",
        env={"FEISHU_WEBHOOK": feishu.url, "FEISHU_SECRET": SECRET},
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert "用例集 workspace-agent：门禁未通过（运行 " in done.stderr
    _assert_chinese_card(card(feishu))


def test_a_language_seatrial_does_not_speak_stops_ci_before_anything_runs(tmp_path, bot):
    feishu = bot("feishu", SECRET)
    project = demo_project(tmp_path, FEISHU)

    done = run_seatrial(
        project,
        "ci",
        "--tier",
        "pr",
        "--agent",
        "v2",
        "--lang",
        "fr",
        env={"FEISHU_WEBHOOK": feishu.url, "FEISHU_SECRET": SECRET},
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert "--lang 'fr' is not a language Seatrial speaks" in done.stderr
    assert feishu.requests == []
    assert not (project / ".seatrial").exists()


def test_the_chinese_card_is_valid_json_that_feishu_reads_as_utf8(tmp_path, bot):
    """The body is UTF-8 JSON with the characters as written (not \\u escapes), which is what
    the bot shows; checked on the raw bytes the server received."""
    feishu = bot("feishu", SECRET)
    project = demo_project(tmp_path, FEISHU)

    done = run_seatrial(
        project,
        "alerts",
        "test",
        "--lang",
        "zh",
        env={"FEISHU_WEBHOOK": feishu.url, "FEISHU_SECRET": SECRET},
    )

    assert done.returncode == 0, done.stdout + done.stderr
    (seen,) = feishu.accepted
    assert "Seatrial 测试消息（workspace-agent）".encode() in seen.raw
    assert b"\\u" not in seen.raw
    body = json.loads(seen.raw.decode("utf-8"))
    assert body["card"]["elements"][1]["fields"][0]["text"]["content"] == (
        "**项目**\nworkspace-agent"
    )
