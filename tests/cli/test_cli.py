"""The seatrial command, run as a user runs it: a real process, real exit codes, real files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import SUITE as DEMO_SUITE
from tests.conftest import agent_spec, wait_for_stored_attempts

SEATRIAL = str(Path(sys.executable).parent / "seatrial")


def seatrial(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_demo_suite_passes_on_v1_and_fails_on_v2_with_reasons(tmp_path):
    v1 = seatrial(
        "run",
        str(DEMO_SUITE),
        "--agent",
        "python:seatrial.demo.agents:v1",
        "--report-dir",
        "v1",
        cwd=tmp_path,
    )
    assert v1.returncode == 0, v1.stdout + v1.stderr
    v2 = seatrial(
        "run",
        str(DEMO_SUITE),
        "--agent",
        "python:seatrial.demo.agents:v2",
        "--report-dir",
        "v2",
        cwd=tmp_path,
    )
    assert v2.returncode == 1, v2.stdout + v2.stderr
    report = json.loads((tmp_path / "v2" / "report.json").read_text(encoding="utf-8"))
    failing = {c["case_id"]: c["attempts"][0] for c in report["cases"] if c["verdict"] != "PASS"}
    assert {k: v["failure_type"] for k, v in failing.items()} == EXPECTED_V2_FAILURES
    assert all(v["reason"] for v in failing.values())
    assert "once-grant-second-write" in v2.stdout and "permission_violation" in v2.stdout
    junit = ET.parse(tmp_path / "v2" / "junit.xml").getroot()
    assert junit.get("failures") == str(len(EXPECTED_V2_FAILURES))
    assert "once-grant-second-write" in (tmp_path / "v2" / "summary.md").read_text(encoding="utf-8")


def test_validate_lists_every_problem_with_file_and_line_and_exits_2(tmp_path):
    suite = tmp_path / "bad.yaml"
    suite.write_text(
        "suite: bad\ncases:\n  - id: a\n    input: hi\n    repeats: three\n"
        "  - id: b\n    input: hi\n    assertions: [{type: tool_caled, expected: x}]\n",
        encoding="utf-8",
    )
    result = seatrial("validate", str(suite), cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.yaml:5" in result.stderr and "repeats" in result.stderr
    assert "bad.yaml:8" in result.stderr and "tool_called" in result.stderr


def test_validate_of_a_folder_counts_the_suite_files_in_it(tmp_path):
    suites = tmp_path / "suites"
    suites.mkdir()
    for name in ("a.yaml", "b.yaml", "c.jsonl"):
        cases = (
            '{"id": "x", "input": "hi"}\n'
            if name.endswith(".jsonl")
            else ("suite: s\ncases:\n  - {id: x, input: hi}\n")
        )
        (suites / name).write_text(cases, encoding="utf-8")
    (suites / "notes.txt").write_text("not a suite\n", encoding="utf-8")
    result = seatrial("validate", "suites", str(suites / "a.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "4 files valid" in result.stdout


def test_broken_yaml_exits_2_and_writes_nothing(tmp_path):
    suite = tmp_path / "broken.yaml"
    suite.write_text("suite: x\ncases:\n  - id: a\n    input: [unclosed\n", encoding="utf-8")
    result = seatrial("run", str(suite), "--agent", agent_spec("echo"), cwd=tmp_path)
    assert result.returncode == 2
    assert "broken.yaml:" in result.stderr
    assert not (tmp_path / ".seatrial").exists()


def test_missing_fixture_folder_exits_2_naming_the_line(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: x\ncases:\n  - id: a\n    input: hi\n    fixture: nowhere\n", encoding="utf-8"
    )
    result = seatrial("run", str(suite), "--agent", agent_spec("echo"), cwd=tmp_path)
    assert result.returncode == 2
    assert "s.yaml:5" in result.stderr and "nowhere" in result.stderr
    assert not (tmp_path / ".seatrial").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "give a SUITE file, --dataset NAME, or --resume RUN_ID"),
        (("s.yaml", "--backend", "cloud"), "--backend cloud: choose local or celery"),
    ],
)
def test_run_without_a_suite_or_with_an_unknown_backend_is_bad_input_not_a_bug(
    tmp_path, args, said
):
    (tmp_path / "s.yaml").write_text("suite: x\ncases: [{id: a, input: hi}]\n", encoding="utf-8")
    result = seatrial("run", *args, "--agent", agent_spec("echo"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert "itself failed" not in result.stderr
    assert not (tmp_path / ".seatrial").exists()


def test_unreachable_agent_exits_2_and_stores_no_run(tmp_path, refused_port):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: x\ncases: [{id: a, input: hi}]\n", encoding="utf-8")
    url = f"http://127.0.0.1:{refused_port}/chat"
    result = seatrial("run", str(suite), "--agent", url, cwd=tmp_path)
    assert result.returncode == 2
    assert url in result.stderr
    assert not (tmp_path / ".seatrial").exists()


def test_report_renders_a_stored_run_in_every_format(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: x\ncases: [{id: a, input: hi, assertions: [{type: contains, value: hi}]}]\n",
        encoding="utf-8",
    )
    assert seatrial("run", str(suite), "--agent", agent_spec("echo"), cwd=tmp_path).returncode == 0
    as_json = json.loads(seatrial("report", "latest", "--format", "json", cwd=tmp_path).stdout)
    assert as_json["summary"]["passed"] == 1 and as_json["cases"][0]["case_id"] == "a"
    junit = seatrial("report", "latest", "--format", "junit", cwd=tmp_path).stdout
    assert ET.fromstring(junit.split("?>", 1)[1]).get("tests") == "1"
    assert "| `a`" not in seatrial("report", "latest", "--format", "md", cwd=tmp_path).stdout
    runs = seatrial("runs", cwd=tmp_path)
    assert as_json["run_id"] in runs.stdout


def test_a_killed_run_is_completed_by_resume(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: k\ncases: [{id: a, input: x, repeats: 30}]\n", encoding="utf-8")
    log = tmp_path / "calls.log"
    env = {"SEATRIAL_TEST_LOG": str(log), "SEATRIAL_TEST_SLEEP": "0.1"}
    process = subprocess.Popen(
        [SEATRIAL, "run", str(suite), "--agent", agent_spec("logged"), "--concurrency", "1"],
        cwd=tmp_path,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db = tmp_path / ".seatrial" / "seatrial.db"
    stored = wait_for_stored_attempts(db, at_least=5)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert 5 <= stored < 30
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("select run_id from runs").fetchone()
        kept = conn.execute("select count(*) from attempts").fetchone()[0]
    calls_before = len(log.read_text(encoding="utf-8").splitlines())
    result = seatrial("run", "--resume", run_id, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from attempts").fetchone()[0] == 30
    calls_after = len(log.read_text(encoding="utf-8").splitlines())
    assert calls_after - calls_before == 30 - kept


def test_init_creates_a_project_whose_example_suite_passes(tmp_path):
    assert seatrial("init", "proj", cwd=tmp_path).returncode == 0
    project = tmp_path / "proj"
    result = seatrial("run", "suites/example.yaml", "--agent", "example", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    again = seatrial("init", "proj", cwd=tmp_path)
    assert again.returncode == 2 and "not overwriting" in again.stderr


NO_GATE_SUITE = """\
suite: ungated
cases:
  - {id: hello, input: hello, assertions: [{type: contains, value: "you said"}]}
  - {id: again, input: hello again, assertions: [{type: contains, value: "you said"}]}
  - {id: third, input: third, assertions: [{type: contains, value: "you said"}]}
  - {id: refund, input: refund, assertions: [{type: contains, value: "%s"}]}
"""
"""Four P1 cases against the echo agent, no gate written anywhere; ``refund`` passes only when
its expected text is ``you said``."""


@pytest.mark.slow
def test_with_no_gate_written_a_failing_case_exits_1_and_a_written_gate_decides(tmp_path):
    agent = agent_spec("echo")
    (tmp_path / "all_pass.yaml").write_text(NO_GATE_SUITE % "you said", encoding="utf-8")
    (tmp_path / "one_fails.yaml").write_text(NO_GATE_SUITE % "refund issued", encoding="utf-8")
    (tmp_path / "half.yaml").write_text("gates:\n  - {min_pass_rate: 0.5}\n", encoding="utf-8")

    passed = seatrial("run", "all_pass.yaml", "--agent", agent, cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "no gate configured: every case must pass" in passed.stdout
    assert "gate met" in passed.stdout

    # No P0 case and no gate: this run said "gate met" and exited 0 before.
    failed = seatrial("run", "one_fails.yaml", "--agent", agent, cwd=tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "no gate configured: every case must pass" in failed.stdout
    assert "every_case: 3 of 4 cases pass" in failed.stdout and "refund FAIL" in failed.stdout
    assert "gate not met" in failed.stdout

    # A written gate replaces the implicit one: one failure of four meets 50%.
    lenient = seatrial(
        "run", "one_fails.yaml", "--agent", agent, "--gates", "half.yaml", cwd=tmp_path
    )
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "no gate configured" not in lenient.stdout
