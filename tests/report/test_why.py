"""Why an attempt did not pass, in lines: the demo's v2 failures as ``seatrial demo``, the
pytest plugin and junit.xml show them."""

from __future__ import annotations

from seatrial.i18n import use_language
from seatrial.report import assertion_lines, build_report, trajectory_lines
from tests.compare.test_drift import run_demo_agent


def failing_attempts(store, version: str):
    report = build_report(store, run_demo_agent(store, version, repeats=1), with_traces=True)
    return {case.case_id: case.attempts[0] for case in report.cases if case.verdict != "PASS"}


def test_a_looping_read_folds_into_one_line_and_turns_are_marked(store):
    failing = failing_attempts(store, "v2")
    assert trajectory_lines(failing["read-missing-config"]) == [
        "    read_file(path='config/settings.yaml') FAILED (FileNotFoundError) x8"
    ]
    assert trajectory_lines(failing["missing-then-example"]) == [
        "  turn 1",
        "    read_file(path='config/settings.yaml') FAILED (FileNotFoundError) x8",
        "  turn 2",
        "    read_file(path='config/settings.example.yaml') ok",
    ]
    # A written file's content stays out of the line; its path says which write it was.
    assert trajectory_lines(failing["once-grant-second-write"])[-1] == (
        "    write_file(path='NOTES.md') FAILED (permission_denied)"
    )


def test_only_the_assertions_that_did_not_pass_are_listed(store):
    attempt = failing_attempts(store, "v2")["once-grant-second-write"]
    lines = assertion_lines(attempt)
    assert len(lines) == sum(r.verdict != "pass" for r in attempt.assertions) >= 1
    assert lines[0].startswith("permissions_respected [L1] fail: `write_file` was denied")
    assert failing_attempts(store, "v1") == {}


def test_an_attempt_without_a_trace_has_no_trajectory(store):
    attempt = failing_attempts(store, "v2")["read-missing-config"]
    assert trajectory_lines(attempt.model_copy(update={"trace": None})) == []


def test_for_a_chinese_reader_the_trajectory_words_are_chinese_and_the_calls_as_called(store):
    failing = failing_attempts(store, "v2")
    with use_language("zh_CN"):
        lines = trajectory_lines(failing["missing-then-example"])
    assert lines == [
        "  第 1 轮",
        "    read_file(path='config/settings.yaml') 失败（FileNotFoundError） x8",
        "  第 2 轮",
        "    read_file(path='config/settings.example.yaml') 成功",
    ]
