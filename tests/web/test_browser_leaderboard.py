"""The leaderboard's chart in Chromium (headless, Playwright): every agent's name is drawn
whole inside the chart, however long (the demo's are ``python:seatrial.demo.agents:v1``)."""

from __future__ import annotations

import pytest

from seatrial.store import Store
from tests.web.conftest import NO_CHROMIUM, DemoStore, find_chromium, snap

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import Browser, Page  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("width", [1024, 1400])
def test_every_agent_name_on_the_leaderboard_chart_is_drawn_whole_inside_it(
    browser: Browser, dashboard: str, demo_store: DemoStore, width: int
) -> None:
    with Store.open(demo_store.url) as store:
        agents = {store.get_run(demo_store.v1).agent, store.get_run(demo_store.v2).agent}
    context = browser.new_context(viewport={"width": width, "height": 900})
    page: Page = context.new_page()
    try:
        page.goto(f"{dashboard}/leaderboard")
        chart = page.locator("#board-chart")
        page.locator("#board-chart svg text").first.wait_for()
        frame = chart.bounding_box()
        assert frame is not None
        labels = {
            text.text_content(): text.bounding_box()
            for text in page.locator("#board-chart svg text").all()
            if text.text_content() in agents
        }
        assert set(labels) == agents  # each name written whole, not cut short
        for name, box in labels.items():
            assert box is not None
            inside = (
                box["x"] >= frame["x"]
                and box["y"] >= frame["y"]
                and box["x"] + box["width"] <= frame["x"] + frame["width"]
                and box["y"] + box["height"] <= frame["y"] + frame["height"]
            )
            assert inside, f"{name} {box} is cut by the chart's edge {frame} at {width}px"
        snap(page, f"leaderboard-{width}")
    finally:
        context.close()
