"""The production traces pages: the filtered list, one trace as a timeline, "make a case"."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi.testclient import TestClient

from seatrial.case import load_suite
from seatrial.dataset import Masker, ingest_traces
from seatrial.store import Store, TraceCheck
from seatrial.trace import traces_from_otlp
from seatrial.web import create_app
from tests.cli.test_traces import LOOP_TRACE_ID, looping_session
from tests.dataset._production_traces import (
    BANK_CARD,
    ID_CARD,
    PHONE,
    SUPPORT_TRACE_ID,
    agent,
    chat,
    export,
    support_session,
)


def seeded(store: Store) -> TestClient:
    traces = traces_from_otlp(export(support_session(), looping_session()))
    ingest_traces(store, traces, source="otlp-json", masker=Masker())
    return TestClient(create_app(store), follow_redirects=False)


def listed(client: TestClient, query: str = "") -> list[str]:
    answer = client.get(f"/api/traces{query}")
    assert answer.status_code == 200, answer.text
    return [row["trace_id"] for row in answer.json()["traces"]]


def test_the_list_shows_ingested_sessions_and_filters_them(store: Store) -> None:
    client = seeded(store)

    page = client.get("/traces")

    assert page.status_code == 200
    for trace_id in (SUPPORT_TRACE_ID, LOOP_TRACE_ID):
        assert f'href="/traces/{trace_id}"' in page.text
    assert "support-bot" in page.text and "files-bot" in page.text
    assert set(listed(client)) == {SUPPORT_TRACE_ID, LOOP_TRACE_ID}
    assert listed(client, "?tool=refund") == [SUPPORT_TRACE_ID]
    assert listed(client, "?error=yes") == [LOOP_TRACE_ID]
    assert listed(client, "?service=files-bot&error=no") == []
    assert listed(client, "?since=2026-05-29") == []
    filtered = client.get("/traces?tool=refund")
    assert f'href="/traces/{LOOP_TRACE_ID}"' not in filtered.text
    assert 'name="tool" value="refund"' in filtered.text


def test_a_filter_that_does_not_read_says_how_to_write_it(store: Store) -> None:
    client = seeded(store)
    page = client.get("/traces?since=last+week")
    assert page.status_code == 400 and "24h" in html.unescape(page.text)
    assert client.get("/api/traces?error=maybe").status_code == 400


def test_the_failed_check_filter_offers_the_checks_that_failed(store: Store) -> None:
    client = seeded(store)
    store.record_trace_checks(
        LOOP_TRACE_ID, [TraceCheck(id="no_loop", type="no_loop", verdict="fail", reason="loop")]
    )
    store.record_trace_checks(
        SUPPORT_TRACE_ID, [TraceCheck(id="no_loop", type="no_loop", verdict="pass")]
    )

    page = client.get("/traces")

    assert '<option value="no_loop">no_loop</option>' in page.text
    assert listed(client, "?failed_check=no_loop") == [LOOP_TRACE_ID]
    one = client.get(f"/traces/{LOOP_TRACE_ID}")
    assert 'id="checks"' in one.text and "loop" in one.text


def test_pages_of_fifty_link_to_the_next(store: Store) -> None:
    client = seeded(store)
    many = [
        agent(f"{n:032x}", [chat(f"{n:032x}", "c1", 10, f"第 {n} 个问题")], service="busy")
        for n in range(1, 52)
    ]
    ingest_traces(store, traces_from_otlp(export(*many)), source="otlp-json", masker=Masker())

    first = client.get("/api/traces?service=busy").json()
    second = client.get("/api/traces?service=busy&page=2").json()

    assert first["has_next"] and len(first["traces"]) == 50
    assert not second["has_next"] and len(second["traces"]) == 1
    assert (
        'rel="next" href="/traces?service=busy&amp;page=2"'
        in client.get("/traces?service=busy").text
    )


def test_one_trace_shows_the_timeline_the_masked_counts_and_the_proposals(store: Store) -> None:
    client = seeded(store)

    page = client.get(f"/traces/{SUPPORT_TRACE_ID}")

    assert page.status_code == 200
    assert page.text.count('class="span-row') == 5  # the attempt page's timeline rows
    assert 'id="masked"' in page.text and "phone" in page.text.lower()
    assert 'id="proposals"' in page.text and "called-tools" in page.text
    assert 'action="/traces/' + SUPPORT_TRACE_ID + '/case"' in page.text
    text = html.unescape(page.text)
    assert "<PHONE_1>" in text
    for raw in (PHONE, ID_CARD, BANK_CARD):
        assert raw not in text
    api = client.get(f"/api/traces/{SUPPORT_TRACE_ID}").json()
    assert len(api["spans"]) == 5 and api["head"]["tools"] == ["search_order", "refund"]
    assert api["resource"]["service.name"] == "support-bot"


def test_an_unknown_trace_is_not_found(store: Store) -> None:
    client = seeded(store)
    assert client.get("/traces/" + "e" * 32).status_code == 404
    assert client.get("/api/traces/" + "e" * 32).status_code == 404
    assert client.post("/traces/" + "e" * 32 + "/case").status_code == 404
    assert store.pending_cases() == []


def test_make_a_case_stores_it_pending_and_goes_to_the_pending_page(store: Store) -> None:
    client = seeded(store)

    answer = client.post(f"/traces/{SUPPORT_TRACE_ID}/case", data={"dataset": "support"})

    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/pending")
    [pending] = store.pending_cases()
    assert (pending.origin, pending.dataset, pending.status) == ("trace", "support", "pending")
    assert pending.case.input is not None and "<BANK_CARD_1>" in pending.case.input
    assert {p["assertion"]["id"] for p in pending.proposals} >= {"called-tools", "params:refund"}
    assert all({"assertion", "why", "keep"} <= set(p) for p in pending.proposals)


def test_the_case_file_downloads_and_loads_as_a_suite(store: Store, tmp_path: Path) -> None:
    client = seeded(store)

    answer = client.get(f"/traces/{SUPPORT_TRACE_ID}/case.yaml")

    assert answer.status_code == 200
    assert "attachment" in answer.headers["content-disposition"]
    path = tmp_path / "case.yaml"
    path.write_text(answer.text, "utf-8")
    [case] = load_suite(path).cases
    assert case.metadata["trace_id"] == SUPPORT_TRACE_ID
    assert "# proposed:" in answer.text


def replies_of(page: str) -> str:
    found = re.search(r'<(ol|p) class="[^"]*" id="replies">(.*?)</\1>', page, re.S)
    assert found, "the trace page shows no replies section"
    return html.unescape(found.group(2))


def test_a_production_trace_page_shows_the_agents_reply_as_stored_masked(store: Store) -> None:
    client = seeded(store)

    page = client.get(f"/traces/{SUPPORT_TRACE_ID}").text

    replies = replies_of(page)
    assert re.search(r"已退款到银行卡 <BANK_CARD_\d+>", replies), replies
    assert BANK_CARD not in replies
    assert page.index('id="replies"') < page.index('id="timeline"')


def test_a_trace_that_records_no_reply_says_so(store: Store) -> None:
    client = seeded(store)

    page = client.get(f"/traces/{LOOP_TRACE_ID}").text

    assert "The trace keeps no reply" in replies_of(page)
