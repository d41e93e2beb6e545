"""The dashboard's security headers and fonts as Chromium applies them (headless, Playwright).

Another site (a server on another 127.0.0.1 port: another origin) frames ``/pending`` next
to a page of its own: its own frame loads, the dashboard's does not. Pages run their charts
under the content policy without one violation, and body text names a Chinese font.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.web.conftest import NO_CHROMIUM, find_chromium, snap

if find_chromium() is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

from playwright.sync_api import ConsoleMessage, Page, expect  # noqa: E402

pytestmark = pytest.mark.slow

OWN_TEXT = "a page of the other site"


def framing_site(dashboard: str) -> Iterator[str]:
    """A site on another 127.0.0.1 port whose front page frames ``/pending`` and a page of
    its own; yields its base URL."""
    front = (
        "<!doctype html><title>other site</title>"
        f'<iframe id="own" src="/own"></iframe>'
        f'<iframe id="dashboard" src="{dashboard}/pending"></iframe>'
    ).encode()
    own = f"<!doctype html><p id='own-text'>{OWN_TEXT}</p>".encode()

    class Site(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            body = own if self.path == "/own" else front
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def other_site(dashboard: str) -> Iterator[str]:
    """``framing_site`` for the demo dashboard."""
    yield from framing_site(dashboard)


def console_errors(page: Page) -> list[str]:
    """The console errors the page logs from now on (a refused frame or script is one)."""
    errors: list[str] = []

    def keep(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", keep)
    return errors


def test_another_site_cannot_frame_the_pending_page(page: Page, other_site: str) -> None:
    errors = console_errors(page)
    page.goto(other_site, wait_until="load")

    own = page.frame_locator("#own")
    expect(own.locator("#own-text")).to_have_text(OWN_TEXT)  # framing itself works
    framed = page.frame_locator("#dashboard")
    expect(framed.locator("body")).not_to_contain_text("Pending")
    assert framed.locator("form, table, header").count() == 0
    assert any("frame-ancestors" in error for error in errors), errors
    snap(page, "framing-refused")


def test_the_dashboard_itself_shows_the_pending_page(page: Page, dashboard: str) -> None:
    page.goto(f"{dashboard}/pending")
    expect(page.locator("h1")).to_contain_text("Pending")


@pytest.mark.parametrize(
    ("path", "drawn"),
    [("/runs", "#trend-pass_rate canvas"), ("/leaderboard", "#board-chart svg")],
)
def test_charts_draw_under_the_content_policy_without_a_violation(
    page: Page, dashboard: str, path: str, drawn: str
) -> None:
    errors = console_errors(page)
    page.goto(f"{dashboard}{path}")
    expect(page.locator(drawn).first).to_be_attached()
    assert not [e for e in errors if "Content Security Policy" in e], errors


def test_body_text_names_a_chinese_font_before_the_generic_family(
    page: Page, dashboard: str
) -> None:
    page.goto(f"{dashboard}/runs")
    family = page.evaluate("getComputedStyle(document.querySelector('main')).fontFamily")
    names = [name.strip().strip('"') for name in family.split(",")]
    assert names[-1] == "sans-serif", family
    for cjk in ("Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei"):
        assert cjk in names[:-1], family
    code = page.evaluate("getComputedStyle(document.querySelector('code')).fontFamily")
    assert "Noto Sans CJK SC" in code, code
    assert page.evaluate("document.documentElement.lang") == "en"


@pytest.mark.parametrize(
    ("path", "chart"), [("/runs", "trend-pass_rate"), ("/leaderboard", "board-chart")]
)
def test_chart_labels_use_the_pages_fonts_chinese_faces_included(
    page: Page, dashboard: str, path: str, chart: str
) -> None:
    page.goto(f"{dashboard}{path}")
    expect(page.locator(f"#{chart} canvas, #{chart} svg").first).to_be_attached()
    family = page.evaluate(
        "id => echarts.getInstanceByDom(document.getElementById(id)).getOption()"
        ".textStyle.fontFamily",
        chart,
    )
    assert "Noto Sans CJK SC" in family and "Microsoft YaHei" in family, family
