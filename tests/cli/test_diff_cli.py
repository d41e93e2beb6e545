"""`seatrial diff` on the demo agents' stored runs, through the Typer app."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.demo._demo import _run
from seatrial.store import Store


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A store URL holding a v1 run, a v2 run and a second v1 run of the demo suite."""
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'seatrial.db'}"
    with Store.open(url) as store:
        runs = {name: asyncio.run(_run(name[:2], store)) for name in ("v1", "v2", "v1-again")}
    yield url, runs


@pytest.fixture
def diff(demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    url, _ = demo
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str):
        return CliRunner(env={"COLUMNS": "200"}).invoke(app, ["diff", *args, "--db", url])

    return invoke


def test_text_marks_the_first_divergence_with_both_attempts_in_the_header(demo, diff):
    _, runs = demo
    result = diff(runs["v1"], runs["v2"], "--case", "read-missing-config")

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"A: run {runs['v1']}  case read-missing-config  attempt 1  PASS" in out
    assert f"B: run {runs['v2']}  case read-missing-config  attempt 1  FAIL (loop)" in out
    assert "models: planner-2025-06 -> planner-2026-01" in out
    marked = [line for line in out.splitlines() if line.startswith(">>")]
    assert len(marked) == 2  # the row and the sentence
    assert "read_file(path='config/settings.yaml') FAILED (FileNotFoundError)" in marked[0]
    assert "extra_step" in marked[0]
    assert "first divergence at step" in marked[1] and "where A replied" in marked[1]
    assert "what led to it:" in out


def test_text_elides_long_runs_of_identical_steps(demo, diff):
    _, runs = demo
    result = diff(f"{runs['v1']}:once-grant-second-write", runs["v2"])

    assert result.exit_code == 0, result.output
    assert "identical steps ..." in result.stdout
    assert "permission write_file: denied (once)" in result.stdout


def test_json_has_the_diff_and_both_headers(demo, diff):
    _, runs = demo
    result = diff(
        f"{runs['v1']}:once-grant-second-write",
        f"{runs['v2'][:-1]}:once-grant-second-write#1",
        "--format",
        "json",
    )

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["a"]["run_id"] == runs["v1"] and data["b"]["run_id"] == runs["v2"]
    assert data["b"]["verdict"] == "FAIL"
    assert data["b"]["failure_type"] == "permission_violation"
    assert data["a"]["agent"] == "python:seatrial.demo.agents:v1"
    first = data["first_divergence"]
    assert first["b"]["turn"] == 1
    assert first["b"]["detail"].get("name") == "write_file" or first["b"]["kind"] == "permission"
    assert data["rows"][first["row"]]["kind"] == first["kind"]


def test_markdown_for_a_pull_request(demo, diff):
    _, runs = demo
    result = diff(runs["v1"], runs["v2"], "--case", "read-missing-config", "-f", "md")

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## Trace diff")
    assert "**First divergence at step" in result.stdout
    assert "| **>>** |" in result.stdout


def test_identical_attempts_exit_zero_and_say_so(demo, diff):
    _, runs = demo
    result = diff(runs["v1"], runs["v1-again"], "--case", "once-grant-second-write")

    assert result.exit_code == 0, result.output
    assert "identical" in result.stdout and ">>" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("latest:no-such-case", "latest"), "no case 'no-such-case'"),
        (("latest", "latest"), "--case"),
        (("nope:read-missing-config", "latest"), "no run id, id prefix or tag 'nope'"),
        (("latest:read-missing-config#9", "latest"), "no attempt 9"),
        (("latest:read-missing-config", "latest", "-f", "html"), "unknown format"),
    ],
)
def test_bad_reference_exits_2_with_the_fix(diff, args, message):
    result = diff(*args)

    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_lang_zh_reads_the_diff_in_chinese_with_ids_and_json_as_written(demo, diff):
    _, runs = demo
    result = diff(runs["v1"], runs["v2"], "--case", "read-missing-config", "--lang", "zh")

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"A: 运行 {runs['v1']}  用例 read-missing-config  第 1 次执行  通过" in out
    assert "失败：死循环（loop）" in out and "模型：planner-2025-06 -> planner-2026-01" in out
    marked = [line for line in out.splitlines() if line.startswith(">>")]
    assert "read_file(path='config/settings.yaml') 失败（FileNotFoundError）" in marked[0]
    assert "第 6 步开始分叉（extra_step）" in marked[1]
    assert "B 调用了 read_file(path='config/settings.yaml')（第 3 次" in marked[1]
    assert "，而 A 回复" in marked[1] and "where A" not in out
    assert "之前的步骤：" in out and "what led to it" not in out
    markdown = diff(runs["v1"], runs["v2"], "--case", "read-missing-config", "--format", "md")
    assert markdown.stdout.startswith("## Trace diff")  # English without --lang
    data = json.loads(
        diff(
            runs["v1"], runs["v2"], "--case", "read-missing-config", "-f", "json", "--lang", "zh"
        ).stdout
    )
    assert data["b"]["verdict"] == "FAIL" and data["b"]["failure_type"] == "loop"
