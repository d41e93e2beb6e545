"""Reports: case verdicts over repeats, the gate, and the three file formats."""

from __future__ import annotations

import json
import time
from xml.etree import ElementTree as ET

import pytest

from seatrial.case import Case
from seatrial.i18n import use_language
from seatrial.record import AttemptRecord, RunInfo
from seatrial.report import build_report, render, verdict_of_attempts, write_reports


def _attempt(case_id: str, n: int, verdict: str, failure_type: str | None = None) -> AttemptRecord:
    return AttemptRecord(
        run_id="r1",
        case_id=case_id,
        attempt=n,
        verdict=verdict,
        failure_type=failure_type,
        reason=f"{failure_type}: because" if failure_type else "all 1 assertions passed",
    )


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["PASS", "PASS", "FAIL"], "PASS"),
        (["PASS", "FAIL", "FAIL"], "FAIL"),
        (["PASS", "WARNING", "FAIL"], "WARNING"),
        (["ERROR", "ERROR", "PASS"], "ERROR"),
        (["PASS", "FAIL"], "FAIL"),
    ],
)
def test_a_case_passes_when_most_of_its_repeats_pass(verdicts, expected):
    attempts = [_attempt("c", i + 1, v) for i, v in enumerate(verdicts)]
    assert verdict_of_attempts(attempts) == expected


def _store_run(store, gate: dict[str, float] | None = None) -> str:
    cases = [
        Case(id="p0-write", input="x", priority="P0", category="write"),
        Case(id="read", input="y", category="read"),
    ]
    store.create_run(
        RunInfo(
            run_id="r1",
            suite="s",
            agent="python:a:b",
            started_at=time.time(),
            settings={"gate": gate or {}},
        ),
        cases,
    )
    store.save_attempts(
        [
            _attempt("p0-write", 1, "FAIL", "permission_violation"),
            _attempt("read", 1, "PASS"),
            _attempt("read", 2, "PASS"),
        ]
    )
    store.finish_run("r1", "finished", time.time())
    return "r1"


def test_a_failing_p0_case_fails_the_gate_and_says_which(store):
    report = build_report(store, _store_run(store))
    assert not report.gate.passed
    assert report.gate.reasons == [
        "P0 p0_cases: 0 of 1 P0 cases pass, needs every P0 case passes: UNMET "
        "(p0-write FAIL (permission_violation))",
        # No gate is written, so every case must pass as well.
        "no gate configured every_case: 1 of 2 cases pass (2/3 attempts PASS), needs every "
        "case passes: UNMET (p0-write FAIL (permission_violation))",
    ]
    by_category = {c.category: c for c in report.categories}
    assert by_category["write"].failures_by_type == {"permission_violation": 1}
    assert by_category["read"].pass_rate == 1.0


def test_min_pass_rate_gate_reports_the_figure(store):
    report = build_report(store, _store_run(store, gate={"min_pass_rate": 0.9}))
    [outcome] = [o for o in report.gate.outcomes if o.check == "min_pass_rate"]
    assert (outcome.gate, outcome.verdict) == ("suite", "unmet")
    assert outcome.figure == "66.7% [20.8%, 93.9%] (2/3 attempts)"
    assert outcome.threshold == "at least 90.0%"


def test_report_json_written_piece_by_piece_is_the_rendered_document(store, tmp_path):
    report = build_report(store, _store_run(store))
    write_reports(report, tmp_path / "out")
    written = (tmp_path / "out" / "report.json").read_text(encoding="utf-8")
    assert written == render(report, "json")


def test_report_files_carry_the_documented_fields(store, tmp_path):
    report = build_report(store, _store_run(store))
    write_reports(report, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert {"run_id", "suite", "agent", "started_at", "finished_at", "summary", "cases"} <= set(
        data
    )
    assert data["summary"] == {
        "cases": 2,
        "attempts": 3,
        "passed": 2,
        "failed": 1,
        "warnings": 0,
        "errors": 0,
        "pass_rate": pytest.approx(2 / 3),
    }
    attempt = data["cases"][0]["attempts"][0]
    assert set(attempt["metrics"]) == {
        "tool_calls",
        "model_calls",
        "wall_time_ms",
        "input_tokens",
        "output_tokens",
        "cost_usd",
    }
    assert attempt["failure_type"] == "permission_violation"
    junit = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    failures = junit.findall(".//failure")
    assert [f.get("type") for f in failures] == ["permission_violation"]
    assert "p0-write" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")


def test_markdown_escapes_table_breaking_characters(store):
    report = build_report(store, _store_run(store))
    report.cases[0].reason = "a | b\nc"
    assert "a \\| b c" in render(report, "md")


def test_every_report_says_whether_the_judges_fail_verdicts_count(store, tmp_path):
    gate = {
        "model": "grader",
        "prompt_version": "v1",
        "prompt_hash": "ab12cd34ef56" + "0" * 52,
        "calibrated": False,
        "agreement": None,
        "items": 0,
        "reason": "no calibration yet; run seatrial judge calibrate",
    }
    store.create_run(
        RunInfo(
            run_id="rj", suite="s", agent="a", started_at=time.time(), settings={"judge": gate}
        ),
        [Case(id="c", input="x")],
    )
    store.save_attempts([_attempt("c", 1, "WARNING").model_copy(update={"run_id": "rj"})])
    report = build_report(store, "rj")
    write_reports(report, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert data["judge"]["calibrated"] is False
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "Judge: grader (prompt v1, ab12cd34ef56): advisory" in summary
    assert "no calibration yet" in summary


HOSTILE = "坏了 <script>alert(1)</script> then <img src=x onerror=alert(1)> & **bold**"
"""An agent reply that a failure reason quotes: two live tags, Chinese text, Markdown."""


def _store_hostile_run(store) -> str:
    store.create_run(
        RunInfo(run_id="rx", suite="客服 <b>suite</b>", agent="a", started_at=time.time()),
        [Case(id="refund", input="x", category="退款")],
    )
    store.save_attempts(
        [
            AttemptRecord(
                run_id="rx",
                case_id="refund",
                attempt=1,
                verdict="FAIL",
                failure_type="semantic_mismatch",
                reason=f"contains '工单号': not in the reply {HOSTILE!r}",
                response=HOSTILE,
            )
        ]
    )
    store.finish_run("rx", "finished", time.time())
    return "rx"


def test_summary_md_keeps_html_from_agent_replies_inert_under_a_real_renderer(store):
    from markdown_it import MarkdownIt

    summary = render(build_report(store, _store_hostile_run(store)), "md")
    # CommonMark passes raw HTML through: what is not escaped here would be a live tag.
    rendered = MarkdownIt("commonmark").enable("table").render(summary)
    for live in ("<script", "<img", "<b>"):
        assert live not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered
    # Chinese as written, and Seatrial's own Markdown still renders.
    assert "坏了" in rendered and "客服" in rendered and "退款" in rendered
    assert "<table>" in rendered and "<strong>0 passed</strong>" in rendered
    assert "<td>refund</td>" not in rendered and "<code>refund</code>" in rendered


def test_summary_md_says_when_no_gate_is_configured_and_every_case_must_pass(store, tmp_path):
    report = build_report(store, _store_hostile_run(store))
    assert not report.gate.passed
    summary = render(report, "md")
    assert "No gate configured: every case must pass." in summary
    assert "| no gate configured | every_case | 0 of 1 cases pass" in summary
    write_reports(report, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert data["gate"]["rule"] == "no gate configured: every case must pass"
    assert data["gate"]["passed"] is False
    junit = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    properties = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert properties["gate"] == "not met"
    assert properties["gate_rule"] == "no gate configured: every case must pass"


def test_a_written_gate_leaves_no_no_gate_line_in_the_reports(store):
    report = build_report(store, _store_run(store, gate={"min_pass_rate": 0.5}))
    assert report.gate.rule is None
    assert "No gate configured" not in render(report, "md")
    assert "gate_rule" not in render(report, "junit")


def test_junit_says_warning_in_the_readers_language_and_keeps_its_ids(store):
    store.create_run(RunInfo(run_id="rw", suite="s", agent="a"), [Case(id="c", input="x")])
    warned = _attempt("c", 1, "WARNING").model_copy(
        update={"run_id": "rw", "reason": "judge advisory"}
    )
    store.save_attempts([warned])
    report = build_report(store, "rw")
    with use_language("zh_CN"):
        chinese = ET.fromstring(render(report, "junit"))
    english = ET.fromstring(render(report, "junit"))
    assert chinese.find("testcase/system-out").text == "警告：judge advisory"
    assert english.find("testcase/system-out").text == "WARNING: judge advisory"
    properties = {p.get("name"): p.get("value") for p in chinese.iter("property")}
    assert properties["run_id"] == "rw"
    assert properties["gate"] == ("met" if report.gate.passed else "not met")
