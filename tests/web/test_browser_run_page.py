"""The run page's layout in Chromium (headless, Playwright): failing cases first, and the
grid of small tables readable from 1,024 px wide up (at 1,400 px the verdict matrix once
spilled over the failures table next to it)."""

from __future__ import annotations

import itertools

import pytest

from seatrial.demo import EXPECTED_V2_FAILURES
from tests.web.conftest import NO_CHROMIUM, DemoStore, find_chromium, snap

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import Browser, FloatRect, Page, expect  # noqa: E402

pytestmark = pytest.mark.slow

GRID_TABLES = ("#matrix", "#failures", "#slowest", "#costliest")


def intersect(a: FloatRect, b: FloatRect) -> bool:
    """Whether two boxes share any area (touching edges do not count)."""
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_boxes_that_touch_or_overlap_are_told_apart() -> None:
    box = {"x": 0.0, "y": 0.0, "width": 10.0, "height": 10.0}
    assert intersect(box, {**box, "x": 9.0})
    assert not intersect(box, {**box, "x": 10.0})
    assert not intersect(box, {**box, "y": 10.0})


@pytest.mark.parametrize("width", [1024, 1400])
def test_the_run_page_grids_do_not_overlap(
    browser: Browser, dashboard: str, demo_store: DemoStore, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page: Page = context.new_page()
    try:
        page.goto(f"{dashboard}/runs/{demo_store.v2}")
        boxes = {}
        for selector in GRID_TABLES:
            box = page.locator(selector).bounding_box()
            assert box is not None and box["width"] > 0, selector
            boxes[selector] = box
        for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
            assert not intersect(box_a, box_b), f"{a} {box_a} overlaps {b} {box_b} at {width}px"
        page_width = page.evaluate("document.documentElement.clientWidth")
        assert all(box["x"] + box["width"] <= page_width for box in boxes.values())
        snap(page, f"run-grid-{width}")
    finally:
        context.close()


def test_the_first_thing_under_the_run_header_is_the_failing_cases(
    page: Page, dashboard: str, demo_store: DemoStore
) -> None:
    page.goto(f"{dashboard}/runs/{demo_store.v2}")
    failing = page.locator("#failing")
    expect(failing.locator("tr.failing-row")).to_have_count(len(EXPECTED_V2_FAILURES))
    for case_id, failure_type in EXPECTED_V2_FAILURES.items():
        row = failing.locator(f'tr[data-case="{case_id}"]')
        expect(row.locator("code.failure-type")).to_have_text(failure_type)
    headings = page.locator("main h2").all_inner_texts()
    assert headings[0].startswith("Failing cases (3 of"), headings
    summary = page.locator("#summary").bounding_box()
    first_failing = failing.bounding_box()
    assert summary and first_failing and first_failing["y"] < summary["y"]
