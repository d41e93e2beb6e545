"""The dashboard in a real browser: Debian's Chromium, headless, driven by Playwright.

One test walks a user's path through the demo's two runs, from the runs list to the first
divergent step of a regressed case, and labels a review item. Every step asserts on the page
and leaves a screenshot in ``test-artifacts/dashboard/`` (kept by CI as an artifact).
"""

from __future__ import annotations

import re

import pytest

from seatrial.compare import diff_attempts
from seatrial.demo._demo import EXPECTED_V2_FAILURES
from seatrial.store import Store
from tests.web.conftest import FAILING_CASE, NO_CHROMIUM, DemoStore, find_chromium, snap

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import Locator, Page, expect  # noqa: E402

pytestmark = pytest.mark.slow


def link_to(path: str) -> str:
    """A CSS selector for the links whose target contains ``path``."""
    return f'a[href*="{path}"]'


def choose_label(page: Page, label: str) -> bool:
    """Pick ``label`` in the review form, however the form offers it.

    Returns True when picking it already submitted the form (a button per label).
    """
    radio = page.locator(f'input[name="label"][value="{label}"]')
    if radio.count():
        radio.first.check()
        return False
    select = page.locator('select[name="label"]')
    if select.count():
        select.first.select_option(label)
        return False
    page.locator(f'button[name="label"][value="{label}"]').first.click()
    return True


def case_row(page: Page, case_link: str) -> Locator:
    """The table rows holding a link whose target contains ``case_link``."""
    return page.locator("tr").filter(has=page.locator(link_to(case_link)))


def test_a_user_finds_why_v2_regressed_and_labels_a_review_item(
    page: Page, dashboard: str, demo_store: DemoStore
) -> None:
    v1, v2 = demo_store.v1, demo_store.v2
    with Store.open(demo_store.url) as store:
        v1_cases = {c.id for c in store.run_cases(v1)}
        base, cand = (store.attempts(run, FAILING_CASE, with_traces=True)[0] for run in (v1, v2))
    trace = cand.trace
    assert trace is not None
    divergence = diff_attempts(base, cand).first
    assert divergence is not None and divergence.b is not None
    unmet = re.compile(r"not met|unmet", re.IGNORECASE)

    # The runs list: both demo runs, v2's gate not met, v1's met.
    page.goto(f"{dashboard}/runs")
    expect(page.locator("h1")).to_have_count(1)
    expect(case_row(page, f"/runs/{v1}").first).not_to_contain_text(unmet)
    expect(case_row(page, f"/runs/{v2}").first).to_contain_text(unmet)
    # The trend's figures arrive from /api/trends: one row and one chart point per run.
    expect(page.locator("#trend-rows tr")).to_have_count(2)
    expect(page.locator("#trend-pass_rate canvas")).to_have_count(1)
    snap(page, "1-runs")

    # v2's run page: the cases it fails, and those alone, marked FAIL.
    page.locator(link_to(f"/runs/{v2}")).first.click()
    page.wait_for_url(re.compile(rf"/runs/{v2}$"))
    expect(page.locator("h1")).to_contain_text(v2)
    for case_id in v1_cases:
        failing = case_row(page, f"/cases/{case_id}").filter(has=page.locator(".FAIL"))
        if case_id in EXPECTED_V2_FAILURES:
            expect(failing.first).to_be_visible()
        else:
            expect(failing).to_have_count(0)
    snap(page, "2-run-v2")

    # The failing case: FAIL, because of a loop.
    page.locator(link_to(f"/cases/{FAILING_CASE}")).first.click()
    page.wait_for_url(re.compile(rf"/runs/{v2}/cases/{FAILING_CASE}$"))
    expect(page.locator(".FAIL").first).to_be_visible()
    expect(page.locator("main")).to_contain_text(re.compile(r"\bloop\b"))
    snap(page, "3-case")

    # Its attempt: one timeline row per span, a FileNotFoundError on each failed read_file.
    page.locator(link_to(f"/cases/{FAILING_CASE}/{cand.attempt}")).first.click()
    page.wait_for_url(re.compile(rf"/runs/{v2}/cases/{FAILING_CASE}/{cand.attempt}$"))
    failed_reads = [c for c in trace.tool_calls() if c.name == "read_file" and not c.success]
    assert failed_reads  # the demo's v2 loops on a read_file that keeps failing
    rows = page.locator("#timeline tr.span-row")
    expect(rows).to_have_count(len(trace.spans))
    failed_rows = rows.filter(has_text="read_file").filter(has_text="FileNotFoundError")
    expect(failed_rows).to_have_count(len(failed_reads))
    snap(page, "4-attempt-timeline")

    # Compare v1 with v2: the regressed cases, PASS before and FAIL now.
    page.goto(f"{dashboard}/compare?base={v1}&cand={v2}")
    expect(page.locator("main")).to_contain_text(
        re.compile(rf"{len(EXPECTED_V2_FAILURES)} regressed", re.IGNORECASE)
    )
    for case_id in EXPECTED_V2_FAILURES:
        row = case_row(page, f"case={case_id}").first
        expect(row).to_contain_text(re.compile("PASS.*FAIL", re.DOTALL))
    snap(page, "5-compare")

    # The failing case's two traces aligned, the first divergent step highlighted.
    case_row(page, f"case={FAILING_CASE}").first.locator("a").first.click()
    page.wait_for_url(re.compile(r"/compare/case\?"))
    first = page.locator("#first-divergence")
    expect(first).to_be_visible()
    expect(first).to_have_class(re.compile(r"\bdivergent\b"))
    expect(first).to_contain_text("read_file")
    expect(first).to_contain_text(divergence.b.label)
    expect(first.locator("xpath=preceding-sibling::tr")).to_have_count(divergence.row)
    snap(page, "6-compare-case")

    # The review queue: open the item, label it fail as alice.
    page.goto(f"{dashboard}/review")
    item_link = page.locator(link_to(f"/review/{demo_store.item_id}")).first
    expect(item_link).to_be_visible()
    item_link.click()
    page.wait_for_url(re.compile(rf"/review/{demo_store.item_id}$"))
    expect(page.locator("main")).to_contain_text(FAILING_CASE)
    snap(page, "7-review-item")
    page.locator('[name="who"]').first.fill("alice")
    page.locator('[name="note"]').first.fill("loops on a missing file")
    if not choose_label(page, "fail"):
        page.locator('form [type="submit"]').first.click()
    page.wait_for_url(re.compile(r"/review(/[^/?]+)?\?"))  # the next item, or the queue
    said = re.compile(r"labelled.*\bfail\b.*\balice\b", re.IGNORECASE | re.DOTALL)
    expect(page.locator("main")).to_contain_text(said)
    snap(page, "8-review-labelled")

    with Store.open(demo_store.url) as store:
        item = store.review_item(demo_store.item_id)
        labels = [label for label in store.labels() if label.item_id == demo_store.item_id]
    assert (item.status, item.label, item.who) == ("labelled", "fail", "alice")
    assert [(label.label, label.who, label.note) for label in labels] == [
        ("fail", "alice", "loops on a missing file")
    ]
