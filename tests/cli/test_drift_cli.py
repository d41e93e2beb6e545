"""``seatrial drift`` and ``seatrial cases stale`` as a user runs them: exit codes, JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from seatrial.case import load_suite
from seatrial.demo._demo import PROJECT, SUITE
from seatrial.store import Store
from tests.cli.test_cli import seatrial
from tests.compare.test_drift import run_demo_agent
from tests.compare.test_stale import stored_run


def db_of(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'seatrial.db'}"


def test_drift_of_v2_against_v1_names_the_probe_and_exits_1(store, tmp_path):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    result = seatrial("drift", v2, "--baseline", v1, "--db", db_of(tmp_path), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    suite = load_suite(SUITE).name
    alarms = [line for line in result.stderr.splitlines() if "drift alarm" in line]
    assert any(f"probe {suite}" in a and "read-missing-config" in a for a in alarms)
    assert "read-missing-config" in result.stdout and v1 in result.stdout


def test_drift_of_two_runs_of_one_agent_exits_0_against_the_earlier(store, tmp_path):
    first = run_demo_agent(store, "v1")
    run_demo_agent(store, "v1")
    result = seatrial("drift", "latest", "--db", db_of(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert first in result.stdout and "no drift alarm" in result.stdout
    assert "drift alarm:" not in result.stderr


def test_drift_with_lang_zh_prints_the_alarm_in_chinese_and_json_keeps_its_keys(store, tmp_path):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    args = ("drift", v2, "--baseline", v1, "--db", db_of(tmp_path), "--lang", "zh")
    result = seatrial(*args, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    suite = load_suite(SUITE).name
    assert f"运行 {v2} 的行为漂移（探针 {suite}" in result.stdout
    assert "全部用例合计" in result.stdout and "工具调用序列" in result.stdout
    alarms = [line for line in result.stderr.splitlines() if "行为漂移告警" in line]
    assert any("用例 read-missing-config：工具调用序列偏移" in a for a in alarms)
    assert "drift alarm" not in result.stderr and "no drift alarm" not in result.stdout
    data = json.loads(seatrial(*args, "--format", "json", cwd=tmp_path).stdout)
    assert "(all cases)" in {a["case_id"] for a in data["alarms"]}
    assert {a["metric"] for a in data["alarms"]} <= {"tool_sequence", "reply_length", "verdict"}


def test_drift_json_lists_the_alarms_and_the_baseline(store, tmp_path):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    result = seatrial(
        "drift",
        "latest",
        "--baseline",
        v1,
        "--format",
        "json",
        "--db",
        db_of(tmp_path),
        cwd=tmp_path,
    )
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["run_id"] == v2 and data["baseline_run_id"] == v1
    assert {"read-missing-config", "(all cases)"} <= {a["case_id"] for a in data["alarms"]}


def test_a_looser_max_distance_silences_the_alarms(store, tmp_path):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    result = seatrial(
        "drift",
        v2,
        "--baseline",
        v1,
        "--max-distance",
        "1",
        "--db",
        db_of(tmp_path),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("latest", "--format", "xml"),
        ("latest", "--max-distance", "1.5"),
        ("no-such-run",),
        ("latest",),  # the only run: nothing earlier to compare with
    ],
)
def test_drift_bad_input_exits_2(store, tmp_path, args):
    run_demo_agent(store, "v1", repeats=1)
    result = seatrial("drift", *args, "--db", db_of(tmp_path), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr


def test_cases_stale_lists_graduate_and_review_candidates(store, tmp_path):
    for _ in range(3):
        stored_run(store, {"always": ["PASS", "PASS"], "never": ["FAIL", "FAIL"]})
    result = seatrial("cases", "stale", "--db", db_of(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    graduate, review = result.stdout.split("review", 1)
    assert "always" in graduate and "never" not in graduate
    assert "never" in review and "only 3 finished runs are stored" in result.stdout
    data = json.loads(
        seatrial(
            "cases",
            "stale",
            "--last",
            "2",
            "--format",
            "json",
            "--db",
            db_of(tmp_path),
            cwd=tmp_path,
        ).stdout
    )
    assert data["suite"] == "golden" and data["runs"] == 2
    assert [c["case_id"] for c in data["graduate"]] == ["always"]
    assert [c["case_id"] for c in data["review"]] == ["never"]


def test_cases_stale_bad_input_exits_2(store, tmp_path):
    empty = seatrial("cases", "stale", "--db", db_of(tmp_path), cwd=tmp_path)
    assert empty.returncode == 2 and "no runs" in empty.stderr
    stored_run(store, {"a": ["PASS"]})
    other = seatrial("cases", "stale", "--suite", "nope", "--db", db_of(tmp_path), cwd=tmp_path)
    assert other.returncode == 2 and "nope" in other.stderr


PROBE = """\
suite: workspace-probe
probe: true
agent: workspace
cases:
  - id: probe-failing-read
    input: Read config/settings.yaml and tell me the mode
    fixture: ../fixtures/config-missing
    assertions: [{type: no_loop, max_repeats: 1}]
  - id: probe-count
    input: Count the lines of notes.txt
    fixture: ../fixtures/three-files
    assertions: [{type: regex, value: "has 2 lines"}]
"""

AGENT = """\
import os

from seatrial.demo import agents


def agent(message, session):
    # The same spec every night; the model behind it changes when MODEL=new.
    return (agents.v2 if os.environ.get("MODEL") == "new" else agents.v1)(message, session)
"""


def nightly_project(tmp_path: Path) -> Path:
    """The demo project plus a probe suite, with one agent whose model can change silently."""
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    (project / "suites" / "probe.yaml").write_text(PROBE, encoding="utf-8")
    with (project / "suites" / "workspace.yaml").open("a", encoding="utf-8") as suite:
        suite.write("agent: workspace\n")
    (project / "seatrial.yaml").write_text(
        f"project: nightly\nagents:\n  workspace: python:{project / 'agent.py'}:agent\n"
        "run: {repeats: 3}\nsuites: [suites/]\n",
        encoding="utf-8",
    )
    return project


def test_nightly_runs_probes_first_and_alarms_when_the_model_changes(tmp_path):
    project = nightly_project(tmp_path)
    first = seatrial("nightly", cwd=project)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.index("workspace-probe") < first.stdout.index("workspace-agent")
    assert "no earlier run to compare with" in first.stdout
    second = seatrial("nightly", cwd=project)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "no drift alarm" in second.stdout
    changed = seatrial("nightly", cwd=project, env={"MODEL": "new"})
    assert changed.returncode == 1, changed.stdout + changed.stderr
    alarms = [line for line in changed.stderr.splitlines() if "drift alarm" in line]
    assert any("probe workspace-probe" in a and "probe-failing-read" in a for a in alarms)
    with Store.open(project_dir=project) as store:
        runs = store.list_runs(tag="nightly")
        assert len(runs) == 6  # the other suite still ran after the alarm
        assert {r.suite for r in runs[:2]} == {"workspace-probe", "workspace-agent"}
        assert all(r.settings.probe == (r.suite == "workspace-probe") for r in runs)


def test_nightly_without_suites_in_seatrial_yaml_exits_2(tmp_path):
    (tmp_path / "seatrial.yaml").write_text("project: empty\n", encoding="utf-8")
    result = seatrial("nightly", cwd=tmp_path)
    assert result.returncode == 2 and "suites" in result.stderr
