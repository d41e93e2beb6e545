"""The dashboard's language per request: ``?lang=`` (remembered in a cookie), the cookie,
``Accept-Language``, the server's language, English; an unknown language is passed over.

Plain HTTP through the app (TestClient) and one real ``seatrial serve --lang``; the browser
walk in both languages is in test_browser_languages.py.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from seatrial.i18n import Language
from seatrial.record import AssertionResult, AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.web import create_app
from seatrial.web._language import LANGUAGE_COOKIE, accepted_language
from tests.web.conftest import SEATRIAL, environment, free_port, serve

RUN = "lang-run"
CASE = "refund-status"
LANG = re.compile(r'<html lang="([^"]+)">')


def seed(store: Store) -> None:
    """One finished run with one failed attempt of one case."""
    attempt = AttemptRecord(
        run_id=RUN,
        case_id=CASE,
        attempt=1,
        verdict="FAIL",
        failure_type="permission_violation",
        reason="refund_order was called without permission",
        assertions=[
            AssertionResult(
                id="no_refund",
                level="L1",
                type="tool_not_called",
                verdict="fail",
                reason="refund_order was called without permission",
                failure_type="permission_violation",
            )
        ],
        response="Refunded.",
        started_at=1_763_000_000.0,
        finished_at=1_763_000_001.0,
    )
    store.create_run(RunInfo(run_id=RUN, suite="support", agent="python:a:b", started_at=1.7e9), [])
    store.save_attempts([attempt])
    store.finish_run(RUN, "finished", 1.7e9 + 5)


@pytest.fixture
def client(store: Store) -> TestClient:
    """The dashboard over a store with one failed run; the server's language is English."""
    seed(store)
    return TestClient(create_app(store))


def language(page: httpx.Response) -> str:
    """The ``lang`` of the page's ``<html>``."""
    found = LANG.search(page.text)
    assert found, page.text[:200]
    return found.group(1)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh_CN"),
        ("en-US,en;q=0.9,zh;q=0.1", "en"),
        ("zh", "zh_CN"),
        ("zh-Hans-CN", "zh_CN"),
        ("en;q=0.5, zh;q=0.6", "zh_CN"),  # the weights decide, not the order
        ("zh;q=0.5, en;q=0.5", "zh_CN"),  # equal weights: the header's order
        ("fr-FR, fr;q=0.9, zh;q=0.8, en;q=0.7", "zh_CN"),  # French is passed over
        ("fr-FR, de", None),
        ("zh-TW, zh-Hant;q=0.9", None),  # Traditional Chinese is not Simplified
        ("zh;q=0, en;q=0.1", "en"),  # q=0: the reader refuses it
        ("zh;q=abc, en;q=0.2", "en"),  # a weight that does not read is passed over
        ("zh;q=1.5, en", "en"),  # so is one above 1
        ("*", None),
        ("", None),
        (" , ;q=1", None),
    ],
)
def test_accept_language_picks_the_preferred_language_seatrial_speaks(header, expected):
    assert accepted_language(header) == expected


def test_a_chinese_browser_reads_pages_in_chinese(client: TestClient):
    page = client.get(f"/runs/{RUN}", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert language(page) == "zh-CN"
    assert "未通过的用例" in page.text and ">失败</span>" in page.text
    assert "Failing cases" not in page.text


def test_an_english_browser_and_no_header_read_english(client: TestClient):
    for headers in ({"Accept-Language": "en-US,en;q=0.9,zh;q=0.1"}, {}):
        page = client.get(f"/runs/{RUN}", headers=headers)
        assert language(page) == "en"
        assert "Failing cases" in page.text and ">FAIL</span>" in page.text
        assert "未通过的用例" not in page.text


def test_lang_in_the_address_wins_and_is_remembered_in_a_cookie(client: TestClient):
    page = client.get(f"/runs/{RUN}?lang=en", headers={"Accept-Language": "zh-CN"})
    assert language(page) == "en"
    cookie = page.headers["set-cookie"]
    assert cookie.startswith(f"{LANGUAGE_COOKIE}=en;") and "Path=/" in cookie
    page = client.get(f"/runs/{RUN}?lang=zh", headers={"Accept-Language": "en"})
    assert language(page) == "zh-CN"
    # The cookie now decides where the address says nothing, over Accept-Language.
    later = client.get("/compare", headers={"Accept-Language": "en"})
    assert language(later) == "zh-CN" and "对比两次运行" in later.text
    assert "set-cookie" not in later.headers  # only a choice is remembered


def test_an_unknown_lang_is_passed_over_not_an_error(client: TestClient):
    page = client.get(f"/runs/{RUN}?lang=fr", headers={"Accept-Language": "zh-CN"})
    assert page.status_code == 200
    assert language(page) == "zh-CN"  # Accept-Language decides
    assert "set-cookie" not in page.headers
    assert language(client.get(f"/runs/{RUN}?lang=")) == "en"


def test_a_cookie_naming_no_language_is_passed_over(client: TestClient):
    client.cookies.set(LANGUAGE_COOKIE, "fr")
    assert language(client.get("/runs", headers={"Accept-Language": "zh"})) == "zh-CN"
    client.cookies.set(LANGUAGE_COOKIE, "zh")
    assert language(client.get("/runs", headers={"Accept-Language": "en"})) == "zh-CN"


@pytest.mark.parametrize(("server", "expected"), [("zh_CN", "zh-CN"), ("en", "en")])
def test_the_servers_language_is_the_default_and_a_browser_overrides_it(
    store: Store, server: Language, expected: str
):
    seed(store)
    client = TestClient(create_app(store, language=server))
    assert language(client.get("/runs")) == expected
    other = "en" if server == "zh_CN" else "zh-CN"
    assert language(client.get("/runs", headers={"Accept-Language": other})) == other


def test_the_switch_links_the_same_page_and_query_in_each_language(client: TestClient):
    page = client.get("/runs?suite=support&page=1&lang=zh")
    switch = page.text.split('id="language-switch"', 1)[1].split("</nav>", 1)[0]
    assert 'href="/runs?suite=support&amp;page=1&amp;lang=en"' in switch
    assert '<strong lang="zh-CN" aria-current="true">中文</strong>' in switch
    assert "lang=zh" not in switch  # the current language is not a link


def test_every_page_has_the_switch_and_its_language(client: TestClient):
    paths = ["/runs", f"/runs/{RUN}", f"/runs/{RUN}/cases/{CASE}", f"/runs/{RUN}/cases/{CASE}/1"]
    paths += ["/compare", "/leaderboard", "/coverage", "/traces", "/pending", "/daily"]
    paths += ["/schedules", "/review", "/calibration", "/runs/nope/cases/x"]
    for path in paths:
        page = client.get(path, headers={"Accept-Language": "zh-CN"})
        assert language(page) == "zh-CN", path
        assert 'id="language-switch"' in page.text, path
        assert ">运行</a>" in page.text, path  # the navigation bar, in Chinese


def test_the_json_api_keeps_its_identifiers_in_every_language(client: TestClient):
    answers = [
        client.get(f"/api/runs/{RUN}/cases/{CASE}/1", headers={"Accept-Language": accept}).json()
        for accept in ("en", "zh-CN")
    ]
    english, chinese = answers
    assert english.keys() == chinese.keys()
    assert english["record"]["verdict"] == chinese["record"]["verdict"] == "FAIL"
    assert chinese["record"]["failure_type"] == "permission_violation"


def test_the_chinese_attempt_page_names_verdicts_and_failure_types_in_chinese(client):
    page = client.get(f"/runs/{RUN}/cases/{CASE}/1?lang=zh").text
    assert "第 1 次执行" in page and "越权（permission_violation）" in page
    assert "<h2>断言</h2>" in page and "<th>原因</th>" in page


@pytest.fixture
def served_in_chinese(tmp_path: Path) -> Iterator[str]:
    """``seatrial serve --lang zh`` over a store with the failed run."""
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    with Store.open(url) as store:
        seed(store)
    with serve(url, tmp_path, "--lang", "zh") as base:
        yield base


def test_serve_lang_zh_writes_pages_in_chinese_unless_the_browser_asks_otherwise(
    served_in_chinese: str,
):
    page = httpx.get(f"{served_in_chinese}/runs/{RUN}", timeout=30)
    assert language(page) == "zh-CN" and "未通过的用例" in page.text
    english = httpx.get(f"{served_in_chinese}/runs/{RUN}", headers={"Accept-Language": "en"})
    assert language(english) == "en"


def test_serve_refuses_a_language_it_does_not_speak(tmp_path: Path):
    refused = subprocess.run(
        [SEATRIAL, "serve", "--port", str(free_port()), "--lang", "fr"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )
    assert refused.returncode == 2
    assert "--lang 'fr' is not a language Seatrial speaks" in refused.stdout + refused.stderr
