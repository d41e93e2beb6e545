"""A run's reasons are stored as messages: a run made in English reads in Chinese for a Chinese
reader, and the other way round; report.json keeps the English beside the message."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import agent_spec, run_seatrial

SUITE = """\
suite: languages
cases:
  - id: echo-refund
    input: 请退款
    assertions:
      - {type: tool_called, expected: refund}
"""
ENGLISH = "tool_called: `refund` was called 0 times, expected at least 1 (tools called: none)"
CHINESE = "tool_called：`refund` 被调用了 0 次，至少应调用 1 次（实际调用的工具：无）"


def _run(tmp_path: Path, lang: str) -> str:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    ran = run_seatrial(
        "run", "suite.yaml", "--agent", agent_spec("echo"), "--lang", lang, cwd=tmp_path
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    return ran.stdout


def test_a_run_made_in_english_reads_in_chinese_for_a_chinese_reader(tmp_path: Path) -> None:
    assert ENGLISH in _run(tmp_path, "en")
    report = run_seatrial("report", "latest", "--lang", "zh", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert CHINESE in report.stdout and ENGLISH not in report.stdout


def test_a_run_made_in_chinese_reads_in_english_and_keeps_english_for_old_readers(
    tmp_path: Path,
) -> None:
    assert CHINESE in _run(tmp_path, "zh")
    report = run_seatrial("report", "latest", "--lang", "en", cwd=tmp_path)
    assert ENGLISH in report.stdout and CHINESE not in report.stdout
    (path,) = (tmp_path / ".seatrial" / "reports").rglob("report.json")
    (attempt,) = json.loads(path.read_text(encoding="utf-8"))["cases"][0]["attempts"]
    assert attempt["reason"] == ENGLISH
    (result,) = attempt["assertions"]
    assert result["reason"] == ENGLISH.removeprefix("tool_called: ")
    assert result["message"]["params"]["called"]["id"] == "none"
