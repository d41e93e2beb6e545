"""The daily report page in a real browser (Debian's Chromium, headless, Playwright), over the
demo's two runs: v2 regresses three cases with a loop and a permission violation."""

from __future__ import annotations

import datetime as dt

import pytest

from seatrial.demo._demo import EXPECTED_V2_FAILURES
from tests.web.conftest import NO_CHROMIUM, DemoStore, find_chromium, snap

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_daily_page_shows_todays_demo_runs_and_leads_to_a_run(
    page: Page, dashboard: str, demo_store: DemoStore
) -> None:
    page.goto(f"{dashboard}/")
    page.click('nav a[href="/daily"]')

    today = dt.date.today().isoformat()
    expect(page.locator("h1")).to_have_text(f"Daily report {today}")
    expect(page.locator(".headline")).to_contain_text("2 runs of 1 suite")
    runs = page.locator("#daily-runs")
    expect(runs).to_contain_text(demo_store.v2)
    expect(runs).to_contain_text(demo_store.v1)
    new_failures = page.locator("#new-failures")
    for case_id, failure_type in EXPECTED_V2_FAILURES.items():
        expect(new_failures).to_contain_text(case_id)
        expect(new_failures).to_contain_text(failure_type)
    clusters = page.locator("#failure-clusters")
    expect(clusters).to_contain_text("loop")
    expect(clusters).to_contain_text("permission_violation")
    snap(page, "daily")

    page.locator("#daily-runs").locator(f'a[href="/runs/{demo_store.v2}"]').first.click()
    expect(page).to_have_url(f"{dashboard}/runs/{demo_store.v2}")

    page.goto(f"{dashboard}/daily")
    page.click("#previous-day")
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    expect(page.locator("h1")).to_have_text(f"Daily report {yesterday}")
    expect(page.locator("#no-runs")).to_be_visible()
