"""A production trace's checks and step summary on its page, in the reader's language."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from seatrial.case import AssertionSpec
from seatrial.dataset import Masker, check_stored_traces, ingest_traces
from seatrial.i18n import english, use_language
from seatrial.store import Store, TraceCheck, TraceQuery
from seatrial.trace import Span, Trace, traces_from_otlp
from seatrial.trace import attrs as A
from seatrial.web import create_app
from seatrial.web._timeline import SUMMARY_STEPS, build_timeline
from tests.cli.test_traces import LOOP_TRACE_ID, looping_session
from tests.dataset._production_traces import SUPPORT_TRACE_ID, export, support_session

CHINESE = {"Accept-Language": "zh-CN,zh;q=0.9"}
ENGLISH = {"Accept-Language": "en-US,en;q=0.9"}


def checked(store: Store) -> TestClient:
    """The support and looping sessions ingested, then checked with ``no_loop``."""
    traces = traces_from_otlp(export(support_session(), looping_session()))
    ingest_traces(store, traces, source="otlp-json", masker=Masker())
    check_stored_traces(store, [AssertionSpec.model_validate({"type": "no_loop"})], TraceQuery())
    return TestClient(create_app(store), follow_redirects=False)


def reason_cell(page: str, check_id: str) -> str:
    """The text of the reason cell of check ``check_id`` in the page's checks table."""
    found = re.search(
        rf"<tr[^>]*><td><code>{re.escape(check_id)}</code></td>.*?"
        r'<td class="reason">(.*?)</td></tr>',
        page,
        re.S,
    )
    assert found is not None, page
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def step_summary(page: str) -> str:
    found = re.search(r'id="step-summary"><code>(.*?)</code>', page, re.S)
    assert found is not None, page
    return html.unescape(found.group(1))


def test_a_checked_trace_keeps_the_reason_as_a_message_and_the_span_it_points_at(
    store: Store,
) -> None:
    checked(store)

    (loop,) = store.trace_head(LOOP_TRACE_ID).checks
    (calm,) = store.trace_head(SUPPORT_TRACE_ID).checks

    assert loop.verdict == "fail" and loop.message is not None and loop.span_id is not None
    assert english(loop.message) == loop.reason and "read_file" in loop.reason
    assert calm.verdict == "pass" and calm.message is not None and calm.span_id is None


def test_a_failed_check_reads_in_chinese_on_a_chinese_page_and_in_english_otherwise(
    store: Store,
) -> None:
    client = checked(store)

    chinese = client.get(f"/traces/{LOOP_TRACE_ID}", headers=CHINESE).text
    english = client.get(f"/traces/{LOOP_TRACE_ID}", headers=ENGLISH).text

    assert "以相同参数" in reason_cell(chinese, "no_loop")
    assert "with the same arguments" not in reason_cell(chinese, "no_loop")
    assert "with the same arguments" in reason_cell(english, "no_loop")
    assert "以相同参数" not in reason_cell(english, "no_loop")
    # The passed check on the other trace is rendered too.
    calm = client.get(f"/traces/{SUPPORT_TRACE_ID}", headers=CHINESE).text
    assert "没有失败的调用被重复超过" in reason_cell(calm, "no_loop")


def test_the_failed_checks_span_is_marked_on_the_trace_timeline_and_linked(store: Store) -> None:
    client = checked(store)
    (loop,) = store.trace_head(LOOP_TRACE_ID).checks

    page = client.get(f"/traces/{LOOP_TRACE_ID}", headers=CHINESE).text

    marked = re.findall(r'<tr class="span-row[^"]*failed-check" id="span-([0-9a-f]+)"', page)
    assert marked == [loop.span_id]
    assert '<tr id="failed-check-1"><td><code>no_loop</code>' in page
    assert f'href="#span-{loop.span_id}"' in page and 'href="#failed-check-1"' in page
    assert "对应 span：read_file" in page
    # A trace whose checks all passed marks no span.
    calm = client.get(f"/traces/{SUPPORT_TRACE_ID}", headers=CHINESE).text
    assert "failed-check" not in calm


def test_a_check_stored_before_messages_reads_as_its_text_in_any_language(store: Store) -> None:
    client = checked(store)
    store.record_trace_checks(
        LOOP_TRACE_ID,
        [TraceCheck(id="old_loop", type="no_loop", verdict="fail", reason="read_file looped")],
    )

    for headers in (CHINESE, ENGLISH):
        page = client.get(f"/traces/{LOOP_TRACE_ID}", headers=headers).text
        assert reason_cell(page, "old_loop") == "read_file looped"
    # It points at no span: only the check with a span marks one.
    page = client.get(f"/traces/{LOOP_TRACE_ID}", headers=CHINESE).text
    assert len(re.findall(r"span-row[^\"]*failed-check", page)) == 1


def test_the_step_summary_reads_in_the_readers_language(store: Store) -> None:
    client = checked(store)

    english = step_summary(client.get(f"/traces/{LOOP_TRACE_ID}", headers=ENGLISH).text)
    chinese = step_summary(client.get(f"/traces/{LOOP_TRACE_ID}", headers=CHINESE).text)

    assert english == (
        "Step1 chat gpt-4o 200ms -> Step2 read_file 50ms FAILED"
        " -> Step3 read_file 50ms FAILED -> Step4 read_file 50ms FAILED"
    )
    assert chinese == (
        "第1步 chat gpt-4o 200ms -> 第2步 read_file 50ms 失败"
        " -> 第3步 read_file 50ms 失败 -> 第4步 read_file 50ms 失败"
    )
    # The support session failed nowhere: no step says so, in either language.
    calm = client.get(f"/traces/{SUPPORT_TRACE_ID}", headers=CHINESE).text
    assert "第1步" in step_summary(calm) and "失败" not in step_summary(calm)
    assert "FAILED" not in step_summary(client.get(f"/traces/{SUPPORT_TRACE_ID}").text)


def test_a_long_summary_says_how_many_more_steps_in_the_readers_language() -> None:
    spans = [
        Span(
            trace_id="t1",
            span_id=f"s{n}",
            name=f"execute_tool read_{n}",
            start_time_unix_nano=n * 1_000_000,
            end_time_unix_nano=n * 1_000_000 + 500_000,
            attributes={A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: f"read_{n}"},
        )
        for n in range(SUMMARY_STEPS + 2)
    ]
    trace = Trace(trace_id="t1", spans=spans)

    with use_language("en"):
        english_summary = build_timeline(trace).summary
    with use_language("zh_CN"):
        chinese_summary = build_timeline(trace).summary

    assert english_summary.endswith(
        f"Step{SUMMARY_STEPS} read_{SUMMARY_STEPS - 1} 0.50ms -> ... (2 more)"
    )
    assert chinese_summary.endswith(
        f"第{SUMMARY_STEPS}步 read_{SUMMARY_STEPS - 1} 0.50ms -> ……（还有 2 步）"
    )
    # Exactly the steps named: one step fewer names none more.
    with use_language("en"):
        short = build_timeline(Trace(trace_id="t1", spans=spans[:SUMMARY_STEPS])).summary
    assert "more" not in short and short.count("Step") == SUMMARY_STEPS
