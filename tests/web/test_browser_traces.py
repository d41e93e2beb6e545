"""The production traces pages in a real browser (Debian's Chromium, headless, Playwright):
filter the list, open a trace, see its timeline, make a case and land on the pending page.

Screenshots of each step go to ``test-artifacts/dashboard/`` beside the main walk's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from seatrial.dataset import Masker, ingest_traces
from seatrial.store import Store
from seatrial.trace import traces_from_otlp
from tests.cli.test_traces import LOOP_TRACE_ID, looping_session
from tests.dataset._production_traces import PHONE, SUPPORT_TRACE_ID, export, support_session
from tests.web.conftest import NO_CHROMIUM, find_chromium, serve, snap

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``seatrial serve`` over a store holding two ingested sessions; (base URL, store URL)."""
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    with Store.open(url) as store:
        traces = traces_from_otlp(export(support_session(), looping_session()))
        ingest_traces(store, traces, source="otlp-json", masker=Masker())
    with serve(url, tmp_path) as base:
        yield base, url


def test_a_user_filters_traces_opens_one_and_makes_a_case_of_it(
    page: Page, dashboard: tuple[str, str]
) -> None:
    base, url = dashboard

    # The list: both sessions, then only the one that called refund.
    page.goto(f"{base}/traces")
    rows = page.locator("#traces tr.trace-row")
    expect(rows).to_have_count(2)
    page.locator('#trace-filters [name="tool"]').fill("refund")
    page.locator('#trace-filters button[type="submit"]').click()
    page.wait_for_url(re.compile(r"/traces\?.*tool=refund"))
    expect(rows).to_have_count(1)
    expect(page.locator(f'tr[data-trace="{LOOP_TRACE_ID}"]')).to_have_count(0)
    snap(page, "traces-1-filtered")

    # One trace: its timeline, masked; its proposed assertions.
    page.locator(f'a[href="/traces/{SUPPORT_TRACE_ID}"]').click()
    page.wait_for_url(re.compile(rf"/traces/{SUPPORT_TRACE_ID}$"))
    expect(page.locator("#timeline tr.span-row")).to_have_count(5)
    expect(page.locator("#timeline")).to_contain_text("refund")
    expect(page.locator("main")).not_to_contain_text(PHONE)
    expect(page.locator("#proposals tr.proposal").first).to_be_visible()
    snap(page, "traces-2-trace")

    # Make a case: it waits on the pending page.
    page.locator('#make-case [name="dataset"]').fill("support")
    page.locator('#make-case button[type="submit"]').click()
    page.wait_for_url(re.compile(r"/pending"))
    expect(page.locator("main")).to_contain_text(re.compile(r"trace-5b8efff7", re.IGNORECASE))
    snap(page, "traces-3-pending")
    with Store.open(url) as store:
        [pending] = store.pending_cases()
    assert pending.origin == "trace" and pending.dataset == "support"
