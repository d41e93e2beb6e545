"""Cases written in Python: ``assert_case`` and the ``seatrial_case`` fixture, against the demo
agents (v1 reports a missing config; v2 retries the failing read in a loop)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.errors import InputError
from seatrial.pytest_plugin import CaseFailed, assert_case
from seatrial.store import Store
from tests.pytest_plugin.test_suite_items import DEMO, run_pytest, summary

MISSING_CONFIG = {
    "input": "Read config/settings.yaml and tell me the mode",
    "fixture": str(DEMO / "fixtures" / "config-missing"),
    "allowed_tools": ["list_directory", "read_file"],
    "assertions": [
        {"type": "no_loop", "max_repeats": 1},
        {"type": "icontains", "value": "could not read"},
    ],
}


def runs_in(db: Path) -> list[tuple[str, list[str], list[str]]]:
    with Store.open(f"sqlite:///{db}") as store:
        return [
            (run.suite, run.tags, [a.case_id for a in store.attempts(run.run_id)])
            for run in store.list_runs()
        ]


def test_assert_case_returns_the_result_of_a_passing_case_and_stores_the_run(tmp_path):
    db = tmp_path / "store.db"
    result = assert_case(
        "python:seatrial.demo.agents:v1",
        case_id="reports-missing-config",
        repeats=2,
        db=f"sqlite:///{db}",
        project_dir=tmp_path,
        **MISSING_CONFIG,
    )
    assert result.verdict == "PASS" and len(result.attempts) == 2
    assert runs_in(db) == [("pytest", ["pytest"], ["reports-missing-config"] * 2)]


def test_assert_case_raises_with_the_reasons_and_the_trajectory_when_the_case_fails(tmp_path):
    db = tmp_path / "store.db"
    with pytest.raises(CaseFailed) as raised:
        assert_case(
            "python:seatrial.demo.agents:v2",
            db=f"sqlite:///{db}",
            project_dir=tmp_path,
            **MISSING_CONFIG,
        )
    assert isinstance(raised.value, AssertionError)  # a plain test failure to pytest
    text = str(raised.value)
    assert text.startswith("FAIL (loop) in 1 of 1 attempts")
    assert "no_loop [L1] fail: `read_file` failed 8 times" in text
    assert "read_file(path='config/settings.yaml') FAILED (FileNotFoundError) x8" in text
    assert len(runs_in(db)) == 1


def test_a_case_written_wrong_is_an_input_error_with_the_fix_and_nothing_runs(tmp_path):
    db = tmp_path / "store.db"
    with pytest.raises(InputError) as raised:
        assert_case(
            "python:seatrial.demo.agents:v1",
            "hello",
            assertions=[{"type": "tool_caled", "expected": "read_file"}],
            repeats=1,
            db=f"sqlite:///{db}",
            project_dir=tmp_path,
            limits={"tool_calls": "many"},
        )
    text = str(raised.value)
    assert "assertions[0]" in text and "`tool_called`" in text
    assert "limits.tool_calls" in text
    with pytest.raises(InputError, match="`input`"):
        assert_case("python:seatrial.demo.agents:v1", db=f"sqlite:///{db}")
    assert not db.exists()


FIXTURE_TESTS = """\
MISSING_CONFIG = {missing!r}


def test_reports_a_missing_config(seatrial_case):
    result = seatrial_case(**MISSING_CONFIG)
    assert result.verdict == "PASS"
"""


@pytest.mark.slow
def test_the_seatrial_case_fixture_runs_the_agent_given_on_the_command_line(tmp_path):
    (tmp_path / "test_agent.py").write_text(
        FIXTURE_TESTS.format(missing=MISSING_CONFIG), encoding="utf-8"
    )
    db = f"sqlite:///{tmp_path / 'store.db'}"
    v1 = run_pytest(
        "--seatrial-agent", "python:seatrial.demo.agents:v1", "--seatrial-db", db, cwd=tmp_path
    )
    assert summary(v1.stdout).startswith("1 passed in"), v1.stdout + v1.stderr
    v2 = run_pytest(
        "--seatrial-agent", "python:seatrial.demo.agents:v2", "--seatrial-db", db, cwd=tmp_path
    )
    assert summary(v2.stdout).startswith("1 failed in"), v2.stdout + v2.stderr
    assert "no_loop [L1] fail: `read_file` failed 8 times" in v2.stdout
    assert "FAILED (FileNotFoundError) x8" in v2.stdout
    assert [(suite, cases) for suite, _, cases in runs_in(tmp_path / "store.db")] == [
        ("test_agent.py", ["test_reports_a_missing_config"])
    ] * 2
