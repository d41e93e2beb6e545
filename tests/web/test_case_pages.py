"""The case and attempt pages (and their JSON) over a store holding real demo runs (v1, v2)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from seatrial.case import Case
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.trace import Span, Trace
from seatrial.trace import attrs as A
from seatrial.web import create_app
from tests.compare.test_compare import run_demo

FAILING = "read-missing-config"
DENIED = "once-grant-second-write"
SCRIPT = "<script>alert(1)</script>"


@dataclass(frozen=True)
class Seeded:
    """The demo runs in a store, and a client of the dashboard over it."""

    store: Store
    client: TestClient
    v1: str
    v2: str
    evil: str
    """A made-up run whose agent replied (and whose tool returned) a script tag."""


def _evil_run(store: Store) -> str:
    run_id = "evil-run-0001"
    case = Case(id="evil", input=f"say {SCRIPT}", category="xss")
    store.create_run(RunInfo(run_id=run_id, suite="evil-suite", agent="python:evil"), [case])
    root = Span(
        trace_id="t1",
        span_id="s1",
        name="invoke_agent evil",
        start_time_unix_nano=1_000_000_000,
        end_time_unix_nano=1_300_000_000,
        attributes={A.OPERATION: A.OP_INVOKE_AGENT},
    )
    tool = Span(
        trace_id="t1",
        span_id="s2",
        parent_span_id="s1",
        name="execute_tool fetch",
        start_time_unix_nano=1_100_000_000,
        end_time_unix_nano=1_200_000_000,
        attributes={
            A.OPERATION: A.OP_EXECUTE_TOOL,
            A.TOOL_NAME: "fetch",
            A.TOOL_ARGUMENTS: '{"url": "x"}',
            A.TOOL_RESULT: f'"{SCRIPT}"',
        },
    )
    record = AttemptRecord(
        run_id=run_id,
        case_id="evil",
        attempt=1,
        verdict="FAIL",
        failure_type="format",
        reason=f"replied {SCRIPT}",
        response=SCRIPT,
        responses=[SCRIPT],
        trace=Trace(trace_id="t1", spans=[root, tool]),
    )
    store.save_attempts([record])
    store.finish_run(run_id, "finished", 2.0)
    return run_id


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """v1 once and v2 with two repeats, run in-process by the real demo agents."""
    folder = tmp_path_factory.mktemp("case-pages")
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as store:
        v1 = run_demo(store, "v1")
        v2 = run_demo(store, "v2", repeats=2)
        evil = _evil_run(store)
        with TestClient(create_app(store)) as client:
            yield Seeded(store, client, v1, v2, evil)


def span_rows(page: str) -> list[str]:
    """The HTML of each ``span-row`` of the timeline, unescaped."""
    table = page.split('id="timeline"', 1)[1].split("</table>", 1)[0]
    return [html.unescape(row) for row in re.findall(r'<tr class="span-row.*?</tr>', table, re.S)]


def test_the_failing_v2_case_page_shows_fail_with_loop_and_the_reason(seeded: Seeded) -> None:
    page = seeded.client.get(f"/runs/{seeded.v2}/cases/{FAILING}")
    assert page.status_code == 200
    records = seeded.store.attempts(seeded.v2, FAILING)
    text = html.unescape(page.text)
    assert page.text.count('<span class="FAIL">FAIL</span>') == len(records) == 2
    assert "loop" in text and records[0].reason in text
    # One column per repeat, each linking to its attempt page.
    for record in records:
        assert f"/runs/{seeded.v2}/cases/{FAILING}/{record.attempt}" in page.text
    # The definition as written: the input and the no_loop assertion's parameter.
    assert "Read config/settings.yaml and tell me the mode" in text
    assert '"max_repeats": 1' in text
    assert "/compare/case?" in page.text


def test_the_case_page_accepts_a_tag_for_the_run(seeded: Seeded) -> None:
    by_tag = seeded.client.get(f"/runs/v2/cases/{FAILING}")
    assert by_tag.status_code == 200 and seeded.v2 in by_tag.text


def test_the_timeline_has_one_row_per_span_with_failed_reads_marked(seeded: Seeded) -> None:
    trace = seeded.store.attempt_trace(seeded.v2, FAILING, 1)
    page = seeded.client.get(f"/runs/{seeded.v2}/cases/{FAILING}/1")
    assert page.status_code == 200
    rows = span_rows(page.text)
    assert len(rows) == len(trace.spans)
    failed = [c for c in trace.tool_calls() if not c.success]
    assert failed and all(c.name == "read_file" for c in failed)
    marked = [r for r in rows if 'class="error-type"' in r and "read_file" in r]
    assert len(marked) == len(failed)
    assert all(f">{c.error_type}<" in marked[0] for c in failed)
    # Tool arguments are there, expandable.
    path = failed[0].arguments["path"]
    assert all('<details class="tool-args">' in r and f'"path": "{path}"' in r for r in marked)
    # The compact step summary at the top names the failed reads.
    summary = re.search(r'id="step-summary"><code>(.*?)</code>', page.text)
    assert summary is not None
    steps = [s for s in trace.spans if s.operation != A.OP_INVOKE_AGENT]
    first_read = next(i for i, s in enumerate(steps, 1) if s.operation == A.OP_EXECUTE_TOOL)
    assert f"Step{first_read} read_file " in summary.group(1) and "FAILED" in summary.group(1)


def test_the_second_write_shows_a_denied_permission_mark(seeded: Seeded) -> None:
    page = seeded.client.get(f"/runs/{seeded.v2}/cases/{DENIED}/1")
    assert page.status_code == 200
    denied = re.findall(r'<div class="mark mark-permission denied"[^>]*>(.*?)</div>', page.text)
    assert len(denied) == 1 and "write_file" in denied[0] and "denied" in denied[0]
    granted = re.findall(r'<div class="mark mark-permission"[^>]*>(.*?)</div>', page.text)
    assert len(granted) == 1 and "granted" in granted[0]
    assert 'class="mark mark-state_change"' in page.text


def test_a_script_in_a_reply_or_tool_result_is_escaped(seeded: Seeded) -> None:
    for url in (f"/runs/{seeded.evil}/cases/evil", f"/runs/{seeded.evil}/cases/evil/1"):
        page = seeded.client.get(url)
        assert page.status_code == 200
        assert SCRIPT not in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


@pytest.mark.parametrize(
    "path",
    [
        "/runs/no-such-run/cases/read-missing-config",
        "/runs/v2/cases/no-such-case",
        "/runs/v2/cases/read-missing-config/9",
        "/api/runs/v2/cases/no-such-case",
        "/api/runs/v2/cases/read-missing-config/9",
    ],
)
def test_unknown_runs_cases_and_attempts_are_404_with_a_message(seeded: Seeded, path: str) -> None:
    answer = seeded.client.get(path)
    assert answer.status_code == 404
    if path.startswith("/api/"):
        assert answer.json()["detail"]
    else:
        assert 'id="not-found"' in answer.text and "<h1>" in answer.text


def test_the_case_json_holds_the_definition_and_every_attempt(seeded: Seeded) -> None:
    data = seeded.client.get(f"/api/runs/{seeded.v2}/cases/{FAILING}").json()
    assert data["case"]["id"] == FAILING
    assert [a["verdict"] for a in data["attempts"]] == ["FAIL", "FAIL"]
    assert {a["failure_type"] for a in data["attempts"]} == {"loop"}


def test_the_attempt_json_holds_the_record_and_every_span(seeded: Seeded) -> None:
    trace = seeded.store.attempt_trace(seeded.v2, FAILING, 1)
    data = seeded.client.get(f"/api/runs/{seeded.v2}/cases/{FAILING}/1").json()
    assert data["record"]["failure_type"] == "loop"
    assert {s["span_id"] for s in data["spans"]} == {s.span_id for s in trace.spans}
    assert any(s["kind"] == "tool_call" and "read_file" in s["label"] for s in data["steps"])


def test_a_missing_case_or_attempt_is_said_in_the_readers_language(seeded: Seeded) -> None:
    case = seeded.client.get(f"/runs/{seeded.v2}/cases/no-such-case?lang=zh")
    assert case.status_code == 404
    assert f"运行 {seeded.v2} 中没有用例 &#39;no-such-case&#39;" in case.text
    attempt = seeded.client.get(f"/api/runs/{seeded.v2}/cases/{FAILING}/9?lang=zh")
    assert attempt.status_code == 404
    assert "没有第 9 次执行（已存：1, 2）" in attempt.json()["detail"]
    english = seeded.client.get(f"/api/runs/{seeded.v2}/cases/{FAILING}/9?lang=en")
    assert "has no attempt 9 (stored: 1, 2)" in english.json()["detail"]
