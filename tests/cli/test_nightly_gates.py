"""``seatrial nightly`` stores and checks a suite's written gates as ``seatrial run`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.report import build_report
from seatrial.store import Store
from tests.conftest import agent_spec

SUITE = """\
suite: gated
agent: {agent}
cases:
  - id: echoes
    input: hello
    assertions: [{{type: contains, value: "you said"}}]
  - id: refunds
    input: refund my order
    assertions: [{{type: contains, value: "refund issued"}}]
"""
"""Two P1 cases against the echo agent: one passes, one fails. Neither the built-in P0 gate nor
a ``gate: {min_pass_rate}`` is set, so only written gates can fail the run."""

UNMET = "gates:\n  - id: overall\n    min_pass_rate: 0.9\n"
"""Half the attempts pass: a 90% gate is unmet."""

MET = "gates:\n  - id: overall\n    min_pass_rate: 0.4\n"
"""Half the attempts pass: a 40% gate is met."""


def gated_project(root: Path, gates: str, *, in_config: bool = False) -> Path:
    """A project whose seatrial.yaml lists one suite; ``gates`` written in the suite file,
    or in seatrial.yaml when ``in_config``."""
    (root / "suites").mkdir(parents=True)
    suite = SUITE.format(agent=agent_spec("echo"))
    (root / "suites" / "gated.yaml").write_text(
        suite if in_config else suite + gates, encoding="utf-8"
    )
    config = "project: gated\nsuites: [suites/]\n"
    (root / "seatrial.yaml").write_text(config + (gates if in_config else ""), encoding="utf-8")
    return root


def invoke(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(project)
    return CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))


def stored_gates(project: Path, run_id: str) -> dict[str, Any]:
    """What the run stored about its gates when it started."""
    with Store.open(project_dir=project) as store:
        settings = store.get_run(run_id).settings
    return settings.model_dump(include={"gates", "gates_hash", "gates_source"})


def gate_lines(project: Path, run_id: str) -> tuple[bool, list[str]]:
    """The run's gate verdict and every check's line, as the report reads them back."""
    with Store.open(project_dir=project) as store:
        gate = build_report(store, run_id, project_dir=project).gate
    return gate.passed, [outcome.line() for outcome in gate.outcomes]


def runs_by_entry(project: Path) -> tuple[str, str]:
    """The ids of the `seatrial run` run and the nightly run of the project, in that order."""
    with Store.open(project_dir=project) as store:
        runs = store.list_runs()
    nightly = [r.run_id for r in runs if "nightly" in r.tags]
    plain = [r.run_id for r in runs if "nightly" not in r.tags]
    assert len(nightly) == 1 and len(plain) == 1, runs
    return plain[0], nightly[0]


def test_nightly_fails_on_a_suites_unmet_gate_with_the_gate_seatrial_run_stores(
    tmp_path, monkeypatch
):
    project = gated_project(tmp_path, UNMET)
    run = invoke(project, monkeypatch, "run", "suites/gated.yaml")
    assert run.exit_code == 1, run.output
    nightly = invoke(project, monkeypatch, "nightly")
    assert nightly.exit_code == 1, nightly.output
    assert "suite gated: gate not met" in nightly.output
    assert "overall min_pass_rate: 50.0%" in nightly.output
    by_run, by_nightly = runs_by_entry(project)
    stored = stored_gates(project, by_nightly)
    assert stored == stored_gates(project, by_run)
    assert stored["gates"] == [{"id": "overall", "min_pass_rate": 0.9}]
    assert stored["gates_source"] == f"suite:{(project / 'suites' / 'gated.yaml').resolve()}"
    passed, lines = gate_lines(project, by_nightly)
    assert not passed
    assert (passed, lines) == gate_lines(project, by_run)
    assert any(line.startswith("overall min_pass_rate") and "UNMET" in line for line in lines)


def test_nightly_exits_0_when_the_suites_gates_are_met(tmp_path, monkeypatch):
    project = gated_project(tmp_path, MET)
    assert invoke(project, monkeypatch, "run", "suites/gated.yaml").exit_code == 0
    nightly = invoke(project, monkeypatch, "nightly")
    assert nightly.exit_code == 0, nightly.output
    assert "every gate met" in nightly.output
    by_run, by_nightly = runs_by_entry(project)
    assert stored_gates(project, by_nightly) == stored_gates(project, by_run)
    passed, lines = gate_lines(project, by_nightly)
    assert passed
    assert (
        "overall min_pass_rate: 50.0% [9.5%, 90.5%] (1/2 attempts), needs at least 40.0%: met"
        in lines
    )


def test_nightly_applies_seatrial_yaml_gates_to_a_suite_that_states_none(tmp_path, monkeypatch):
    project = gated_project(tmp_path, UNMET, in_config=True)
    nightly = invoke(project, monkeypatch, "nightly")
    assert nightly.exit_code == 1, nightly.output
    with Store.open(project_dir=project) as store:
        (only,) = store.list_runs()
    stored = stored_gates(project, only.run_id)
    assert stored["gates_source"] == f"config:{(project / 'seatrial.yaml').resolve()}"
    assert stored["gates"] == [{"id": "overall", "min_pass_rate": 0.9}]


def test_nightly_baseline_is_stored_and_read_by_the_regression_gate(tmp_path, monkeypatch):
    gates = "gates:\n  - id: overall\n    max_regression: {points: 5}\n"
    project = gated_project(tmp_path, gates)
    first = invoke(project, monkeypatch, "nightly", "--baseline", "latest")
    assert first.exit_code == 0, first.output
    assert "no baseline" in first.output  # the first run has nothing to compare with
    second = invoke(project, monkeypatch, "nightly", "--baseline", "latest")
    assert second.exit_code == 0, second.output
    with Store.open(project_dir=project) as store:
        newest, earlier = store.list_runs()
    assert newest.settings.baseline.model_dump() == {"ref": "latest", "run_id": earlier.run_id}
    _, lines = gate_lines(project, newest.run_id)
    assert any(
        line.startswith("overall max_regression: change +0.0 points") and line.endswith("met")
        for line in lines
    ), lines
