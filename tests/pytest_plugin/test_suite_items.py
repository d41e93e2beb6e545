"""``pytest --seatrial SUITE`` as a user runs it: a real pytest process in a copy of the demo
project, its summary line, its failure output and what it stored."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.pytest_plugin import CaseItem
from seatrial.store import Store
from tests.conftest import agent_spec

DEMO = Path(__file__).resolve().parents[2] / "src" / "seatrial" / "demo" / "project"
SUITE = "suites/workspace.yaml"


OTHER_PLUGINS = ("asyncio", "anyio", "hypothesispytest", "schemathesis", "timeout", "xdist")
"""Plugins installed beside Seatrial's, kept out of the runs below: they are not under test,
they take seconds to load, and pytest-asyncio warns about its own configuration."""


def run_pytest(*args: str, cwd: Path, others: bool = False) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh process, the plugin loaded through its entry point as a user's is.

    Warnings are errors there too. ``others`` keeps the other installed plugins in. Nothing
    of this process's pytest or store settings leaks in.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTEST_") and key != "SEATRIAL_DB_URL"
    }
    blocked = [] if others else [f"-pno:{name}" for name in OTHER_PLUGINS]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *blocked, "-W", "error", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "COLUMNS": "250"},
    )


def summary(output: str) -> str:
    """pytest's last line: ``3 failed, 11 passed in 0.6s``, without the ``=`` rule."""
    return output.strip().splitlines()[-1].strip("= ")


def failed_ids(output: str) -> set[str]:
    """The node ids of pytest's ``FAILED ...`` summary lines."""
    return set(re.findall(r"^FAILED (\S+)", output, re.M))


def stored_runs(project: Path) -> list[tuple[str, list[str], list[str]]]:
    """Each run in the project's store: its suite, tags and case ids."""
    db = project / ".seatrial" / "seatrial.db"
    if not db.exists():
        return []
    with Store.open(f"sqlite:///{db}") as store:
        return [
            (run.suite, run.tags, [case.id for case in store.run_cases(run.run_id)])
            for run in store.list_runs()
        ]


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo project (seatrial.yaml with agents v1 and v2, suite, fixtures)."""
    project = tmp_path / "demo"
    shutil.copytree(DEMO, project)
    return project


def test_v2_fails_exactly_the_three_regressed_cases_with_reasons_and_trajectory(demo):
    done = run_pytest("--seatrial", SUITE, "--seatrial-agent", "v2", cwd=demo)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert summary(out).startswith("3 failed, 11 passed in")
    assert failed_ids(out) == {f"{SUITE}::{case}" for case in EXPECTED_V2_FAILURES}
    # The reasons: each failed assertion with its message.
    assert "no_loop [L1] fail: `read_file` failed 8 times with the same arguments" in out
    assert "permissions_respected [L1] fail: `write_file` was denied (scope once" in out
    # The failing trajectory, as `seatrial demo` prints it.
    assert "read_file(path='config/settings.yaml') FAILED (FileNotFoundError) x8" in out
    assert "write_file(path='NOTES.md') FAILED (permission_denied)" in out
    assert "gate not met" in out
    ((suite, tags, cases),) = stored_runs(demo)
    assert (suite, tags, len(cases)) == ("workspace-agent", ["pytest"], 14)


def test_v1_passes_every_case_and_the_gate(demo):
    done = run_pytest("--seatrial", SUITE, "--seatrial-agent", "v1", cwd=demo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary(done.stdout).startswith("14 passed in")
    assert "gate met" in done.stdout
    assert len(stored_runs(demo)) == 1


def test_k_runs_only_the_selected_cases_as_one_stored_run(demo):
    done = run_pytest(
        "--seatrial",
        SUITE,
        "--seatrial-agent",
        "v2",
        "-k",
        "read-missing-config or create-todo",
        cwd=demo,
    )
    assert summary(done.stdout).startswith("1 failed, 1 passed, 12 deselected"), done.stdout
    assert failed_ids(done.stdout) == {f"{SUITE}::read-missing-config"}
    ((_, _, cases),) = stored_runs(demo)
    assert cases == ["read-missing-config", "create-todo"]


@pytest.mark.slow
def test_markers_select_cases_by_priority_and_category_under_strict_markers(demo):
    p0 = run_pytest(
        "--seatrial", SUITE, "--seatrial-agent", "v2", "-m", "P0", "--strict-markers", cwd=demo
    )
    assert summary(p0.stdout).startswith("1 failed, 1 passed, 12 deselected"), p0.stdout
    assert failed_ids(p0.stdout) == {f"{SUITE}::once-grant-second-write"}
    loops = run_pytest(
        "--seatrial", SUITE, "--seatrial-agent", "v2", "-m", "category_failing_tool", cwd=demo
    )
    assert summary(loops.stdout).startswith("2 failed, 12 deselected"), loops.stdout
    # No demo case is P2: nothing is selected, and nothing is run or stored.
    none = run_pytest("--seatrial", SUITE, "--seatrial-agent", "v2", "-m", "P2", cwd=demo)
    assert none.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, none.stdout
    assert sorted(cases for _, _, cases in stored_runs(demo)) == [
        ["once-grant-second-write", "customer-record-no-pii"],
        ["read-missing-config", "missing-then-example"],
    ]


def test_collect_only_lists_one_item_per_case_and_runs_nothing(demo):
    done = run_pytest("--seatrial", SUITE, "--seatrial-agent", "v2", "--co", "-q", cwd=demo)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = [line for line in done.stdout.splitlines() if line.startswith(f"{SUITE}::")]
    assert len(listed) == 14 and f"{SUITE}::once-grant-second-write" in listed
    one = run_pytest("--seatrial", SUITE, f"{SUITE}::create-todo", "--co", "-q", cwd=demo)
    assert [line for line in one.stdout.splitlines() if "::" in line] == [f"{SUITE}::create-todo"]
    assert stored_runs(demo) == []


def test_a_bad_suite_is_a_usage_error_naming_the_file_line_and_fix(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "suite: bad\ncases:\n  - id: a\n    input: hi\n    repeats: three\n"
        "  - id: b\n    input: hi\n    assertions: [{type: tool_caled, expected: x}]\n",
        encoding="utf-8",
    )
    done = run_pytest("--seatrial", "bad.yaml", "--seatrial-agent", "v1", cwd=tmp_path)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "bad.yaml:5" in done.stderr and "repeats" in done.stderr
    assert "bad.yaml:8" in done.stderr and "tool_called" in done.stderr
    missing = run_pytest("--seatrial", "nowhere.yaml", cwd=tmp_path)
    assert missing.returncode == pytest.ExitCode.USAGE_ERROR
    assert "nowhere.yaml" in missing.stderr


def test_a_suite_without_an_agent_or_with_an_unknown_one_is_a_usage_error(demo):
    no_agent = run_pytest("--seatrial", SUITE, cwd=demo)
    assert no_agent.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--seatrial-agent" in no_agent.stderr
    unknown = run_pytest("--seatrial", SUITE, "--seatrial-agent", "v9", cwd=demo)
    assert unknown.returncode == pytest.ExitCode.USAGE_ERROR, unknown.stdout
    assert "v9" in unknown.stderr
    # pytest-xdist would split the suite into one run per worker.
    split = run_pytest(
        "--seatrial",
        SUITE,
        "--seatrial-agent",
        "v2",
        "-n",
        "2",
        "-W",
        "ignore::DeprecationWarning",
        cwd=demo,
        others=True,
    )
    assert split.returncode == pytest.ExitCode.USAGE_ERROR, split.stdout + split.stderr
    assert "drop -n" in split.stderr
    assert stored_runs(demo) == []


VERDICTS = """\
suite: verdicts
gate:
  min_pass_rate: 1.0
cases:
  - id: plain
    category: read-only
    tags: [smoke]
    input: hello
    assertions: [{type: contains, value: fine}]
  - id: unjudged
    input: hello again
    assertions:
      - {type: contains, value: fine}
      - {type: llm-rubric, value: the reply is polite, must_pass: true}
  - id: boom
    input: boom now
    assertions: [{type: contains, value: fine}]
"""


@pytest.mark.slow
def test_warning_passes_and_says_so_error_fails_and_a_missed_gate_fails_the_session(tmp_path):
    (tmp_path / "suite.yaml").write_text(VERDICTS, encoding="utf-8")
    agent = ("--seatrial-agent", agent_spec("crash_on_boom"))
    every = run_pytest("--seatrial", "suite.yaml", *agent, "-v", cwd=tmp_path)
    assert summary(every.stdout).startswith("1 failed, 2 passed in"), every.stdout
    assert "suite.yaml::unjudged WARNING" in every.stdout
    assert failed_ids(every.stdout) == {"suite.yaml::boom"}
    assert "ERROR (agent_error)" in every.stdout and "boom happened" in every.stdout
    # Every selected case passes (one with a WARNING), but min_pass_rate 1.0 is missed.
    warned = run_pytest("--seatrial", "suite.yaml", *agent, "-k", "not boom", cwd=tmp_path)
    assert summary(warned.stdout).startswith("2 passed, 1 deselected in"), warned.stdout
    assert "WARNING (passes) unjudged: llm-rubric was not evaluated" in warned.stdout
    assert "gate not met" in warned.stdout
    assert warned.returncode == pytest.ExitCode.TESTS_FAILED
    # Markers from a category with a hyphen and from a tag; the one case selected passes
    # and the gate holds.
    plain = run_pytest(
        "--seatrial",
        "suite.yaml",
        *agent,
        "-m",
        "category_read_only and tag_smoke",
        "--strict-markers",
        cwd=tmp_path,
    )
    assert summary(plain.stdout).startswith("1 passed, 2 deselected in"), plain.stdout
    assert plain.returncode == pytest.ExitCode.OK and "gate met" in plain.stdout


CONFTEST_RECORDING_MODULES = """\
import json, sys

def pytest_sessionfinish(session):
    with open("modules.json", "w") as out:
        json.dump(sorted(sys.modules), out)
"""

PLUGIN_MODULES = {"seatrial", "seatrial._version", "seatrial.pytest_plugin"}
"""What loading the plugin may import of Seatrial: the package, its version, the plugin."""


def test_without_seatrial_the_plugin_collects_no_suite_and_imports_nothing_heavy(demo):
    (demo / "conftest.py").write_text(CONFTEST_RECORDING_MODULES, encoding="utf-8")
    (demo / "test_smoke.py").write_text("def test_smoke():\n    pass\n", encoding="utf-8")
    done = run_pytest("-v", cwd=demo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary(done.stdout).startswith("1 passed in") and "workspace.yaml" not in done.stdout
    modules = json.loads((demo / "modules.json").read_text(encoding="utf-8"))
    assert "seatrial.pytest_plugin" in modules  # loaded, through the entry point
    ours = {m for m in modules if m.split(".")[0] == "seatrial"}
    assert {m for m in ours if not m.startswith("seatrial.pytest_plugin.")} == PLUGIN_MODULES
    assert "sqlalchemy" not in modules


def test_this_repositorys_own_pytest_run_has_the_plugin_and_no_seatrial_items(request):
    assert request.config.pluginmanager.get_plugin("seatrial") is not None
    assert not request.config.getoption("seatrial_suites")
    assert not [item for item in request.session.items if isinstance(item, CaseItem)]
