"""``seatrial.run_suite()`` runs a suite as ``seatrial run`` does: the same gates stored when the
run starts, the same verdict when it ends."""

from __future__ import annotations

import pytest

import seatrial
from seatrial.run import RunOptions
from seatrial.store import Store
from tests.cli.test_nightly_gates import (
    MET,
    UNMET,
    gate_lines,
    gated_project,
    invoke,
    stored_gates,
)
from tests.conftest import agent_spec


def only_run_besides(project, known: set[str]) -> str:
    with Store.open(project_dir=project) as store:
        (new,) = [r.run_id for r in store.list_runs() if r.run_id not in known]
    return new


def test_run_suite_fails_on_the_suites_unmet_gate_as_seatrial_run_does(tmp_path, monkeypatch):
    project = gated_project(tmp_path, UNMET)
    cli = invoke(project, monkeypatch, "run", "suites/gated.yaml")
    assert cli.exit_code == 1, cli.output
    by_cli = only_run_besides(project, set())
    report = seatrial.run_suite(project / "suites" / "gated.yaml", project_dir=project)
    assert report.info.run_id != by_cli
    assert not report.gate.passed
    assert any(r.startswith("overall min_pass_rate") for r in report.gate.reasons)
    stored = stored_gates(project, report.info.run_id)
    assert stored == stored_gates(project, by_cli)
    assert stored["gates"] == [{"id": "overall", "min_pass_rate": 0.9}]
    assert gate_lines(project, report.info.run_id) == gate_lines(project, by_cli)


def test_run_suite_passes_when_the_suites_gates_are_met(tmp_path, monkeypatch):
    project = gated_project(tmp_path, MET)
    assert invoke(project, monkeypatch, "run", "suites/gated.yaml").exit_code == 0
    by_cli = only_run_besides(project, set())
    report = seatrial.run_suite(project / "suites" / "gated.yaml", project_dir=project)
    assert report.gate.passed, report.gate.reasons
    assert stored_gates(project, report.info.run_id) == stored_gates(project, by_cli)
    assert gate_lines(project, report.info.run_id) == gate_lines(project, by_cli)


def test_run_suite_finds_seatrial_yaml_gates_from_the_suites_folder(tmp_path, monkeypatch):
    project = gated_project(tmp_path, UNMET, in_config=True)
    monkeypatch.chdir(tmp_path.parent)  # called from elsewhere: the suite's project still rules
    report = seatrial.run_suite(project / "suites" / "gated.yaml")
    assert not report.gate.passed
    stored = stored_gates(project, report.info.run_id)  # the project's own store
    assert stored["gates_source"] == f"config:{(project / 'seatrial.yaml').resolve()}"


def test_a_gates_file_wins_over_the_suites_gates(tmp_path):
    project = gated_project(tmp_path, UNMET)
    lenient = tmp_path / "gates.yaml"
    lenient.write_text(MET, encoding="utf-8")
    report = seatrial.run_suite(
        project / "suites" / "gated.yaml", project_dir=project, gates=lenient
    )
    assert report.gate.passed, report.gate.reasons
    assert stored_gates(project, report.info.run_id)["gates_source"] == (
        f"file:{lenient.resolve()}"
    )


def test_run_suite_without_written_gates_still_fails_a_failing_p0_case(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"agent: {agent_spec('echo')}\ncases:\n"
        "  - {id: p0, priority: P0, input: hi, assertions: [{type: contains, value: nope}]}\n",
        encoding="utf-8",
    )
    report = seatrial.run_suite(suite, db=f"sqlite:///{tmp_path / 'seatrial.db'}")
    assert not report.gate.passed
    assert [o.check for o in report.gate.outcomes if o.verdict == "unmet"] == [
        "p0_cases",
        "every_case",
    ]


def test_run_suite_keeps_its_old_arguments_and_stores_where_it_did(tmp_path, monkeypatch):
    suite = tmp_path / "suite.yaml"
    suite.write_text("cases:\n  - {id: a, input: hi}\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    report = seatrial.run_suite(suite, agent_spec("echo"), options=RunOptions(repeats=2))
    assert report.gate.passed
    assert [a.verdict for a in report.cases[0].attempts] == ["PASS", "PASS"]
    assert report.cases[0].attempts[0].trace is not None  # the report carries traces
    assert (work / ".seatrial" / "seatrial.db").is_file()  # the current folder, as before
    assert not (work / ".seatrial" / "reports").exists()  # no files unless asked


def test_run_suite_writes_report_files_when_given_a_folder(tmp_path):
    project = gated_project(tmp_path, UNMET)
    out = tmp_path / "out"
    report = seatrial.run_suite(
        project / "suites" / "gated.yaml", project_dir=project, report_dir=out
    )
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "report.json", "summary.md"]
    assert "Gate **NOT met**" in (out / "summary.md").read_text(encoding="utf-8")
    assert not report.gate.passed


def test_execute_suite_gives_the_exit_code_of_seatrial_run(tmp_path):
    failing = gated_project(tmp_path / "failing", UNMET)
    passing = gated_project(tmp_path / "passing", MET)
    from seatrial.config import load_config

    failed = seatrial.execute_suite(failing / "suites" / "gated.yaml", config=load_config(failing))
    assert (failed.passed, failed.exit_code) == (False, 1)
    assert {p.name for p in failed.report_files} == {"junit.xml", "report.json", "summary.md"}
    assert failed.report_files[0].parent == failing / ".seatrial" / "reports" / failed.run_id
    met = seatrial.execute_suite(passing / "suites" / "gated.yaml", config=load_config(passing))
    assert (met.passed, met.exit_code) == (True, 0)


def test_resuming_with_gates_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(seatrial.SeatrialError, match="fixed when a run starts"):
        seatrial.execute_suite(resume="latest", gates=tmp_path / "gates.yaml")


def test_a_suite_runs_repr_names_the_run_not_every_attempt(tmp_path):
    # asyncio.run formats its main task's result as it ends: a repr holding the whole report
    # cost ~0.3 s at 1,000 attempts. A person printing the result wants the run, not the report.
    from seatrial._execute import SuiteRun

    project = gated_project(tmp_path, MET)
    report = seatrial.run_suite(project / "suites" / "gated.yaml", project_dir=project)
    result = SuiteRun(run_id=report.info.run_id, report=report)
    assert repr(result) == (
        f"SuiteRun(run_id={report.info.run_id!r}, report_files=(), interrupted=False)"
    )
    assert "AttemptRecord" not in repr(result)
