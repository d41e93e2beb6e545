"""The run's gate verdict (one function for report, dashboard, latest-passing and the library),
and the warning when a gates source changed after the run started."""

from __future__ import annotations

import time

import pytest

from seatrial.case import Case, GateSpec, load_gates_section, load_suite
from seatrial.compare import (
    NO_GATE,
    RunData,
    gate_settings,
    gates_changed,
    load_run,
    resolve_run_ref,
    run_meets_gates,
    stored_baseline,
)
from seatrial.errors import SuiteError
from seatrial.record import AttemptRecord, RunInfo, RunSettings
from seatrial.report import build_report
from tests.compare.test_gates import case, run

REGRESSION = GateSpec(id="no-drop", max_regression={"points": 0})


def _regression_settings(baseline_id: str | None = None) -> dict:
    settings = gate_settings([REGRESSION], "file:gates.yaml")
    if baseline_id is not None:
        settings["baseline"] = {"ref": baseline_id, "run_id": baseline_id}
    return settings


def test_a_run_meets_its_gates_only_when_no_check_is_unmet():
    good = run(case("p0", "P", priority="P0"), case("b", "PP"))
    assert run_meets_gates(good).passed
    bad = run(case("p0", "F", priority="P0", failure="loop"), case("b", "PP"))
    verdict = run_meets_gates(bad)
    assert not verdict.passed
    assert verdict.reasons == [o.line() for o in verdict.outcomes if o.verdict == "unmet"]
    assert "P0 p0_cases" in verdict.reasons[0]


def test_the_stored_written_gates_count_with_the_builtin_ones():
    cases = [case("a", "P"), case("b", "F")]
    strict = gate_settings([GateSpec(min_pass_rate=0.9)], "file:g.yaml")
    lenient = gate_settings([GateSpec(min_pass_rate=0.5)], "file:g.yaml")
    assert not run_meets_gates(run(*cases, settings=strict)).passed
    assert run_meets_gates(run(*cases, settings=lenient)).passed


def test_a_regression_gate_blocks_against_the_baseline_and_not_without_one():
    base = run(*[case(f"c{i}", "PPP") for i in range(10)], run_id="base")
    worse = [case(f"c{i}", "PPP" if i >= 5 else "FFF") for i in range(10)]
    candidate = run(*worse, settings=_regression_settings("base"))
    against = run_meets_gates(candidate, base, flaky=())
    assert not against.passed and against.baseline == "base"
    alone = run_meets_gates(candidate)
    assert alone.passed and alone.baseline is None
    [regression] = [o for o in alone.outcomes if o.check == "max_regression"]
    assert regression.verdict == "not_evaluated"


def test_flaky_cases_are_worked_out_when_not_given():
    base = run(*[case(f"c{i}", "PPPP") for i in range(10)], run_id="base")
    # Every case disagrees across its repeats: all flaky, so no case is left to compare.
    candidate = run(
        *[case(f"c{i}", "PPPF") for i in range(10)], settings=_regression_settings("base")
    )
    assert run_meets_gates(candidate, base).passed
    assert not run_meets_gates(candidate, base, flaky=()).passed


def _store(store, run_id: str, verdicts: dict[str, str], settings: dict, agent: str = "a") -> None:
    cases = [Case(id=case_id, input="x") for case_id in verdicts]
    store.create_run(
        RunInfo(run_id=run_id, suite="s", agent=agent, started_at=time.time(), settings=settings),
        cases,
    )
    store.save_attempts(
        [
            AttemptRecord(run_id=run_id, case_id=case_id, attempt=1, verdict=verdict)
            for case_id, verdict in verdicts.items()
        ]
    )
    store.finish_run(run_id, "finished", time.time())


def test_latest_passing_leaves_a_runs_own_regression_gates_aside(store):
    # Another agent, so the baseline's verdicts are no history that would make cases flaky.
    _store(store, "old", {f"c{i}": "PASS" for i in range(10)}, {}, agent="previous")
    dropped = {f"c{i}": "PASS" if i < 5 else "FAIL" for i in range(10)}
    _store(store, "dropped", dropped, _regression_settings("old"))
    report = build_report(store, "dropped")
    assert not report.gate.passed and report.gate.baseline == "old"
    assert [o.check for o in report.gate.outcomes if o.verdict == "unmet"] == ["max_regression"]
    # Judged alone it met every gate it can be judged on: it may be the next run's baseline.
    assert resolve_run_ref(store, "latest-passing") == "dropped"


def test_latest_passing_skips_a_run_that_failed_its_written_gates(store):
    _store(store, "good", {"a": "PASS", "b": "PASS"}, {})
    strict = gate_settings([GateSpec(min_pass_rate=1.0)], "file:g.yaml")
    _store(store, "bad", {"a": "PASS", "b": "FAIL"}, strict)
    assert resolve_run_ref(store, "latest-passing") == "good"


def test_the_stored_baseline_is_read_from_the_store_and_none_once_deleted(store):
    _store(store, "old", {"a": "PASS"}, {})
    _store(store, "new", {"a": "PASS"}, _regression_settings("old"))
    new = load_run(store, "new")
    found = stored_baseline(store, new)
    assert isinstance(found, RunData) and found.info.run_id == "old"
    gone = RunData(
        new.info.model_copy(
            update={"settings": RunSettings.model_validate(_regression_settings("x"))}
        ),
        (),
    )
    assert stored_baseline(store, gone) is None
    assert stored_baseline(None, new) is None


def test_an_edit_to_a_suite_file_outside_its_gates_is_no_gates_change(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "cases:\n  - {id: a, input: x}\ngates:\n  - min_pass_rate: 0.9\n", encoding="utf-8"
    )
    settings = gate_settings(load_suite(suite).gates, f"suite:{suite}")
    suite.write_text(
        "cases:\n  - {id: a, input: y}\n  - {id: b, input: z}\ngates:\n  - min_pass_rate: 0.9\n",
        encoding="utf-8",
    )
    assert gates_changed(RunSettings.model_validate(settings)) is None
    suite.write_text(
        "cases:\n  - {id: a, input: y}\ngates:\n  - min_pass_rate: 0.5\n", encoding="utf-8"
    )
    warning = gates_changed(RunSettings.model_validate(settings))
    assert warning is not None and "changed after this run started" in warning


def test_a_seatrial_yaml_gates_change_is_seen_and_its_other_settings_are_not(tmp_path):
    config = tmp_path / "seatrial.yaml"
    config.write_text("project: p\ngates:\n  - tag: smoke\n    min_pass_rate: 1\n", "utf-8")
    settings = gate_settings(load_gates_section(config), "config:seatrial.yaml")
    assert gates_changed(RunSettings.model_validate(settings), tmp_path) is None
    config.write_text(
        "project: renamed\nrun: {repeats: 3}\ngates:\n  - {tag: smoke, min_pass_rate: 1}\n",
        "utf-8",
    )
    assert gates_changed(RunSettings.model_validate(settings), tmp_path) is None
    config.write_text("project: p\n", encoding="utf-8")
    warning = gates_changed(RunSettings.model_validate(settings), tmp_path)
    assert warning is not None and str(config) in warning
    config.write_text("", encoding="utf-8")
    assert gates_changed(RunSettings.model_validate(settings), tmp_path) is not None


def test_a_gates_source_that_no_longer_loads_says_so_and_a_missing_one_is_silent(tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - min_pass_rate: 0.9\n", encoding="utf-8")
    settings = gate_settings(load_gates_section(path), f"file:{path}")
    path.write_text("gates:\n  - min_pass_rate: 2\n", encoding="utf-8")
    warning = gates_changed(RunSettings.model_validate(settings))
    assert warning is not None and "no longer loads" in warning
    path.unlink()
    assert gates_changed(RunSettings.model_validate(settings)) is None


def test_a_mistake_in_the_gates_of_seatrial_yaml_names_its_line(tmp_path):
    path = tmp_path / "seatrial.yaml"
    path.write_text("project: p\ngates:\n  - min_pass_rate: 0.9\n  - tag: x\n", "utf-8")
    with pytest.raises(SuiteError, match="at least one check") as caught:
        load_gates_section(path)
    assert [p.line for p in caught.value.problems] == [4]
    path.write_text("- just a list\n", "utf-8")
    with pytest.raises(SuiteError, match="mapping"):
        load_gates_section(path)


def _implicit(verdict):
    [outcome] = [o for o in verdict.outcomes if o.gate == NO_GATE]
    return outcome


def test_with_no_gate_written_a_run_whose_cases_all_pass_meets_every_case_passes():
    verdict = run_meets_gates(run(case("a", "PPP"), case("b", "P")))
    assert verdict.passed
    assert verdict.rule == "no gate configured: every case must pass"
    outcome = _implicit(verdict)
    assert outcome.verdict == "met" and outcome.figure == "2 of 2 cases pass (4/4 attempts PASS)"


def test_with_no_gate_written_one_failing_case_fails_the_run_and_is_named():
    # No P0 case and no gate: this run printed "gate met" and exited 0 before.
    verdict = run_meets_gates(run(case("a", "P"), case("b", "F", failure="loop"), case("c", "P")))
    assert not verdict.passed
    outcome = _implicit(verdict)
    assert outcome.verdict == "unmet" and outcome.detail == "b FAIL (loop)"
    assert verdict.reasons == [outcome.line()]


def test_an_error_attempt_or_one_failed_repeat_of_three_fails_every_case_passes():
    errored = run_meets_gates(run(case("a", "P"), case("b", "E", failure="timeout")))
    assert not errored.passed and _implicit(errored).detail == "b ERROR (timeout)"
    # Two of three repeats passed: the case's own verdict is PASS, but each repeat counts.
    flaky = run_meets_gates(run(case("a", "PPF", failure="loop")))
    assert not flaky.passed and _implicit(flaky).detail == "a FAIL 1 of 3 (loop)"


def test_a_warning_is_no_failure_but_a_run_with_no_pass_meets_nothing():
    reviewed = run_meets_gates(run(case("a", "P"), case("b", "W")))
    assert reviewed.passed
    assert _implicit(reviewed).detail == "1 WARNING attempt to review (not failures)"
    nothing_passed = run_meets_gates(run(case("a", "W"), case("b", "WW")))
    assert not nothing_passed.passed
    assert "no attempt passed" in _implicit(nothing_passed).detail


def test_a_run_with_no_attempt_does_not_meet_the_gate_of_a_suite_without_gates():
    verdict = run_meets_gates(run())
    assert not verdict.passed and verdict.rule is not None
    assert [o.check for o in verdict.outcomes if o.verdict == "unmet"] == ["attempts"]


def test_a_written_gate_replaces_every_case_passes():
    cases = [case("a", "P"), case("b", "P"), case("c", "P"), case("d", "F", failure="loop")]
    written = gate_settings([GateSpec(min_pass_rate=0.5)], "file:gates.yaml")
    lenient = run_meets_gates(run(*cases, settings=written))
    assert lenient.passed and lenient.rule is None
    assert all(o.gate != NO_GATE for o in lenient.outcomes)
    # The suite's own `gate: {min_pass_rate}` is a written gate too.
    suite_gate = run_meets_gates(run(*cases, settings={"gate": {"min_pass_rate": 0.5}}))
    assert suite_gate.passed and suite_gate.rule is None
    # A suite `gate:` with nothing set writes no gate.
    unset = run_meets_gates(run(*cases, settings={"gate": {"min_pass_rate": None}}))
    assert not unset.passed and unset.rule is not None


def test_the_p0_gate_still_holds_beside_every_case_passes():
    verdict = run_meets_gates(run(case("p0", "F", priority="P0", failure="loop"), case("b", "P")))
    assert {o.check for o in verdict.outcomes if o.verdict == "unmet"} == {
        "p0_cases",
        "every_case",
    }


def test_latest_passing_skips_a_run_without_gates_whose_case_failed(store):
    _store(store, "good", {"a": "PASS", "b": "PASS"}, {})
    _store(store, "bad", {"a": "PASS", "b": "FAIL"}, {})
    assert resolve_run_ref(store, "latest-passing") == "good"
