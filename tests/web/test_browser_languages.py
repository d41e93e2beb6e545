"""The dashboard in both its languages, in a real browser (Debian's Chromium, headless).

The run, attempt (case), trace and compare pages of the demo's runs read in Chinese for a
browser that asks for Chinese (``Accept-Language: zh-CN``) and in English with ``?lang=en``
from that same browser; the switch on every page changes the language, and the choice is
remembered. Each page is photographed in each language into ``test-artifacts/dashboard/``;
with ``SEATRIAL_DOC_SCREENSHOTS=1`` also into ``docs/img/`` (the pictures docs/dashboard.md
shows: ``dashboard-run-zh.png`` ...), 1280x800, which test_docs_screenshots.py checks.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from seatrial.dataset import Masker, ingest_traces
from seatrial.trace import traces_from_otlp
from tests.dataset._production_traces import SUPPORT_TRACE_ID, export, support_session
from tests.web.conftest import (
    ARTIFACTS,
    FAILING_CASE,
    NO_CHROMIUM,
    DemoStore,
    find_chromium,
    serve,
)

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import Browser, Page, expect  # noqa: E402

from seatrial.store import Store  # noqa: E402

pytestmark = pytest.mark.slow

DOC_IMAGES = Path(__file__).parents[2] / "docs" / "img"
"""Where the screenshots docs/dashboard.md shows are kept."""
DOC_SCREENSHOTS = "SEATRIAL_DOC_SCREENSHOTS"
"""Set to 1 to write the screenshots into docs/img/ too (they change with every demo run)."""
VIEWPORT = {"width": 1280, "height": 800}


@dataclass(frozen=True)
class Shown:
    """What a reader sees on one page in one language: text inside an element."""

    selector: str
    text: str


@dataclass(frozen=True)
class Page_:
    """One page of the walk: its name (the screenshot's), its address, what each language
    shows there."""

    name: str
    path: str
    zh: tuple[Shown, ...]
    en: tuple[Shown, ...]


@pytest.fixture(scope="module")
def dashboard_with_trace(demo_store: DemoStore) -> Iterator[str]:
    """``seatrial serve`` (English by default) over the demo's runs plus one production
    trace."""
    with Store.open(demo_store.url) as store:
        traces = traces_from_otlp(export(support_session()))
        ingest_traces(store, traces, source="otlp-json", masker=Masker())
    with serve(demo_store.url, demo_store.folder) as base:
        yield base


def pages(demo: DemoStore) -> list[Page_]:
    """The four pages a reader reads in either language."""
    v1, v2 = demo.v1, demo.v2
    return [
        Page_(
            "run",
            f"/runs/{v2}",
            zh=(
                Shown("h1", "运行"),
                Shown("#failing h2", "未通过的用例"),
                Shown("#failing-cases", "失败"),
                Shown("#gates thead", "门禁"),
            ),
            en=(
                Shown("h1", "Run"),
                Shown("#failing h2", "Failing cases"),
                Shown("#failing-cases", "FAIL"),
                Shown("#gates thead", "Gate"),
            ),
        ),
        Page_(
            "case",
            f"/runs/{v2}/cases/{FAILING_CASE}/1",
            zh=(
                Shown("h1", "第 1 次执行"),
                Shown("h1 span.FAIL", "失败"),
                Shown("#timeline thead", "耗时"),
                Shown("table.assertions thead", "断言"),
            ),
            en=(
                Shown("h1", "Attempt 1 of"),
                Shown("h1 span.FAIL", "FAIL"),
                Shown("#timeline thead", "Duration"),
                Shown("table.assertions thead", "Assertion"),
            ),
        ),
        Page_(
            "trace",
            f"/traces/{SUPPORT_TRACE_ID}",
            zh=(
                Shown("table.trace-head", "会话 / 用户"),
                Shown("main", "智能体的回复"),
                Shown("#make-case button", "生成用例"),
            ),
            en=(
                Shown("table.trace-head", "Session / user"),
                Shown("main", "The agent's reply"),
                Shown("#make-case button", "Make a case"),
            ),
        ),
        Page_(
            "compare",
            f"/compare?base={v1}&cand={v2}",
            zh=(
                Shown("h1", "与基线"),
                Shown("#regressed h3", "回归"),
                Shown("#categories thead", "分类"),
            ),
            en=(
                Shown("h1", "with baseline"),
                Shown("#regressed h3", "Regressed"),
                Shown("#categories thead", "Category"),
            ),
        ),
    ]


def photograph(page: Page, name: str) -> None:
    """Keep what the reader sees (the first 1280x800) in test-artifacts/, and in docs/img/
    when ``SEATRIAL_DOC_SCREENSHOTS=1``."""
    page.wait_for_load_state("networkidle")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png")
    if os.environ.get(DOC_SCREENSHOTS) == "1":
        page.screenshot(path=DOC_IMAGES / f"{name}.png")


def reads(page: Page, shown: tuple[Shown, ...], absent: tuple[Shown, ...]) -> None:
    for item in shown:
        expect(page.locator(item.selector).first).to_contain_text(item.text)
    for item in absent:  # the other language's words are not there
        if item.text not in {s.text for s in shown}:
            expect(page.locator(item.selector).first).not_to_contain_text(item.text)


@pytest.mark.parametrize("name", ["run", "case", "trace", "compare"])
def test_a_chinese_browser_reads_the_page_in_chinese_and_lang_en_in_english(
    browser: Browser, dashboard_with_trace: str, demo_store: DemoStore, name: str
) -> None:
    seen = next(p for p in pages(demo_store) if p.name == name)
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{dashboard_with_trace}{seen.path}")
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        reads(page, seen.zh, seen.en)
        photograph(page, f"dashboard-{name}-zh")

        joiner = "&" if "?" in seen.path else "?"
        page.goto(f"{dashboard_with_trace}{seen.path}{joiner}lang=en")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        reads(page, seen.en, seen.zh)
        photograph(page, f"dashboard-{name}-en")
    finally:
        context.close()
    assert not errors, f"script errors in the pages: {errors}"


def test_the_switch_changes_the_language_and_the_choice_is_remembered(
    browser: Browser, dashboard_with_trace: str, demo_store: DemoStore
) -> None:
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(f"{dashboard_with_trace}/runs/{demo_store.v2}")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.locator("#failing h2")).to_contain_text("Failing cases")

        page.locator('#language-switch a[hreflang="zh-CN"]').click()
        page.wait_for_url(re.compile(rf"/runs/{demo_store.v2}\?lang=zh$"))
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        expect(page.locator("#failing h2")).to_contain_text("未通过的用例")
        expect(page.locator('#language-switch [aria-current="true"]')).to_have_text("中文")
        cookies = {c["name"]: c["value"] for c in context.cookies()}
        assert cookies.get("seatrial_lang") == "zh"

        # A page reached by a plain link, the browser still asking for English: Chinese.
        page.locator("#compare-link").click()
        page.wait_for_url(re.compile(r"/compare\?base=[^&]+&cand=[^&]+$"))
        expect(page.locator("h1")).to_contain_text("与基线")

        page.locator('#language-switch a[hreflang="en"]').click()
        page.wait_for_url(re.compile(r"/compare\?base=[^&]+&cand=[^&]+&lang=en$"))
        expect(page.locator("h1")).to_contain_text("with baseline")
        page.goto(f"{dashboard_with_trace}/runs")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.locator("h1")).to_have_text("Runs")
    finally:
        context.close()
