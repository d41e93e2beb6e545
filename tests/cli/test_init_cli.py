"""``seatrial init`` in the reader's language: a Chinese template whose suite runs and passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from seatrial.demo import write_project
from seatrial.errors import InputError
from tests.cli.test_cli import seatrial

CHINESE = re.compile(r"[\u4e00-\u9fff]")

WRITTEN = (
    "seatrial.yaml",
    "suites/example.yaml",
    "fixtures/faq/faq.txt",
    "agents/example_agent.py",
)


def test_init_lang_zh_writes_a_chinese_project_whose_suite_passes_in_chinese(tmp_path):
    made = seatrial("init", "proj", "--lang", "zh", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "已创建" in made.stdout and "下一步" in made.stdout
    project = tmp_path / "proj"
    for name in WRITTEN:
        text = (project / name).read_text(encoding="utf-8")
        assert CHINESE.search(text), name
        assert "\\u" not in text, name
    settings = yaml.safe_load((project / "seatrial.yaml").read_text(encoding="utf-8"))
    assert settings["language"] == "zh"
    suite = yaml.safe_load((project / "suites/example.yaml").read_text(encoding="utf-8"))
    for case in suite["cases"]:
        assert CHINESE.search(case["name"]) and CHINESE.search(case["input"]), case["id"]
    assert "# 示例用例集" in (project / "suites/example.yaml").read_text(encoding="utf-8")
    # The project's `language: zh` speaks Chinese to every command run inside it.
    result = seatrial("run", "suites/example.yaml", "--agent", "example", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "门禁通过" in result.stdout
    assert "3 次通过，0 次失败" in result.stdout


def test_the_chinese_suite_fails_when_the_agent_answers_off_the_faq(tmp_path):
    # The Chinese assertions check the Chinese answers: an agent that forgets the refund
    # rule fails the refund case, and only it.
    assert seatrial("init", "proj", "--lang", "zh", cwd=tmp_path).returncode == 0
    project = tmp_path / "proj"
    agent = project / "agents/example_agent.py"
    agent.write_text(
        agent.read_text(encoding="utf-8").replace('return faq["退款"]', 'return "请联系客服。"'),
        encoding="utf-8",
    )
    result = seatrial("run", "suites/example.yaml", "--agent", "example", cwd=project)
    assert result.returncode == 1
    assert "refund-policy" in result.stdout and "门禁未通过" in result.stdout


def test_seatrial_lang_picks_the_chinese_template_and_lang_en_wins_over_it(tmp_path):
    zh = seatrial("init", "zh", cwd=tmp_path, env={"SEATRIAL_LANG": "zh"})
    assert zh.returncode == 0, zh.stderr
    assert "language: zh" in (tmp_path / "zh/seatrial.yaml").read_text(encoding="utf-8")
    en = seatrial("init", "en", "--lang", "en", cwd=tmp_path, env={"SEATRIAL_LANG": "zh"})
    assert en.returncode == 0, en.stderr
    assert "created" in en.stdout and "已创建" not in en.stdout
    for name in WRITTEN:
        assert not CHINESE.search((tmp_path / "en" / name).read_text(encoding="utf-8")), name


def test_init_with_an_unknown_lang_writes_nothing(tmp_path):
    result = seatrial("init", "proj", "--lang", "fr", cwd=tmp_path)
    assert result.returncode == 2 and "fr" in result.stderr
    assert not (tmp_path / "proj").exists()


def test_one_template_never_overwrites_the_other(tmp_path: Path) -> None:
    write_project(tmp_path, "zh_CN")
    with pytest.raises(InputError, match="not overwriting"):
        write_project(tmp_path, "en")
