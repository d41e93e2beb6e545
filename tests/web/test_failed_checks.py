"""Reasons in the reader's language, and the spans failed checks point at.

A run stores each reason as a message (an id and its parameters) beside its English text: the
dashboard renders the message in the page's language, and shows the stored text for runs made
before messages were. The attempt page lists its failed checks above the timeline, each
linking to the span it points at (``span_id``), and the timeline marks those spans.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from seatrial.case import Case
from seatrial.i18n import phrased
from seatrial.record import AssertionResult, AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.trace import Span, Trace
from seatrial.trace import attrs as A
from seatrial.web import create_app

RUN = "reasons-run"
CASE = "refund"
OLD = "old-run-case"
MISSING = phrased("`{where}` is missing", where="order_id")
"""A reason the catalogs translate: 缺少 `order_id`."""
ENGLISH = "`order_id` is missing"
TOOL_SPAN = "b2"


def span(span_id: str, name: str, start: int, end: int, **attributes: object) -> Span:
    return Span(
        trace_id="t9",
        span_id=span_id,
        parent_span_id=None if span_id == "b1" else "b1",
        name=name,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=attributes,
    )


def results() -> list[AssertionResult]:
    return [
        AssertionResult(
            id="params:refund",
            level="L1",
            type="tool_params",
            verdict="fail",
            reason=ENGLISH,
            message=MISSING,
            failure_type="wrong_params",
            span_id=TOOL_SPAN,
        ),
        AssertionResult(
            id="reply-mentions",
            level="L2",
            type="contains",
            verdict="fail",
            reason="the reply does not contain 'refunded'",
            failure_type="format",
        ),
        AssertionResult(
            id="no-loop", level="L1", type="no_loop", verdict="pass", reason="", span_id="b3"
        ),
    ]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One run: an attempt whose reasons are messages, with a trace; and one stored before
    messages (its reason text only)."""
    folder = tmp_path_factory.mktemp("reasons")
    trace = Trace(
        trace_id="t9",
        spans=[
            span("b1", "invoke_agent shop", 0, 3_000_000, **{A.OPERATION: A.OP_INVOKE_AGENT}),
            span(
                TOOL_SPAN,
                "execute_tool refund",
                1_000_000,
                2_000_000,
                **{A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: "refund"},
            ),
            span("b3", "chat model", 2_000_000, 2_500_000, **{A.OPERATION: A.OP_CHAT}),
        ],
    )
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as store:
        cases = [Case(id=CASE, input="退款"), Case(id=OLD, input="你好")]
        store.create_run(RunInfo(run_id=RUN, suite="shop", agent="python:a:b"), cases)
        store.save_attempts(
            [
                AttemptRecord(
                    run_id=RUN,
                    case_id=CASE,
                    attempt=1,
                    verdict="FAIL",
                    failure_type="wrong_params",
                    reason=ENGLISH,
                    message=MISSING,
                    assertions=results(),
                    trace=trace,
                ),
                AttemptRecord(
                    run_id=RUN,
                    case_id=OLD,
                    attempt=1,
                    verdict="FAIL",
                    failure_type="format",
                    reason="an old run's reason, said in English",
                ),
            ]
        )
        store.finish_run(RUN, "finished", 2.0)
        yield TestClient(create_app(store))


def text(page: str) -> str:
    return html.unescape(page)


@pytest.mark.parametrize(
    "path",
    [f"/runs/{RUN}", f"/runs/{RUN}/cases/{CASE}", f"/runs/{RUN}/cases/{CASE}/1"],
)
def test_a_stored_reason_reads_in_the_readers_language(client: TestClient, path: str) -> None:
    chinese = text(client.get(f"{path}?lang=zh").text)
    assert "缺少 `order_id`" in chinese and ENGLISH not in chinese
    english = text(client.get(f"{path}?lang=en").text)
    assert ENGLISH in english and "缺少" not in english


def test_a_reason_stored_before_messages_shows_as_stored_in_either_language(client) -> None:
    for lang in ("zh", "en"):
        page = text(client.get(f"/runs/{RUN}/cases/{OLD}/1?lang={lang}").text)
        assert "an old run's reason, said in English" in page


def test_the_attempt_page_lists_failed_checks_linking_to_their_spans(client) -> None:
    page = client.get(f"/runs/{RUN}/cases/{CASE}/1?lang=en").text
    panel = page.split('id="failed-checks"', 1)[1].split("</section>", 1)[0]
    items = re.findall(r'<li id="failed-check-(\d)">(.*?)</li>', panel, re.S)
    assert [n for n, _ in items] == ["1", "2"]  # the passing no-loop is not listed
    first, second = (html.unescape(body) for _, body in items)
    assert "params:refund" in first and ENGLISH in first
    assert f'href="#span-{TOOL_SPAN}"' in first
    assert "refund" in first.split("at the span", 1)[1]
    assert "reply-mentions" in second and "(it points at no span)" in second


def test_the_timeline_marks_the_span_a_failed_check_points_at_and_no_other(client) -> None:
    page = client.get(f"/runs/{RUN}/cases/{CASE}/1?lang=zh").text
    rows = {span: kind for kind, span in re.findall(r'<tr class="([^"]*)" id="span-(\w+)"', page)}
    assert rows.keys() == {"b1", "b2", "b3"}
    assert "failed-check" in rows[TOOL_SPAN]
    assert "failed-check" not in rows["b1"]
    assert "failed-check" not in rows["b3"]  # a passing check's span stays unmarked
    row = page.split(f'id="span-{TOOL_SPAN}"', 1)[1].split("</tr>", 1)[0]
    assert '<a class="failed-check-id" href="#failed-check-1"' in row
    assert "✗ params:refund" in row
    assert "未通过的检查" in page and "对应 span：refund" in page


def test_a_failed_check_naming_a_span_the_trace_lacks_points_at_none(client) -> None:
    from seatrial.web._timeline import Timeline, failed_checks

    lost = AssertionResult(
        id="x", level="L1", type="t", verdict="fail", reason="r", span_id="nowhere"
    )
    (check,) = failed_checks([lost], Timeline(rows=[], total_ms=0.0, summary=""))
    assert check.span_id is None and check.reason == "r"
