r"""Chinese in the dashboard: written as it is, in pages and in every JSON answer.

A Chinese team's cases, assertions, replies and reasons are in Chinese; the dashboard shows
the characters, never ``\u5df2\u9000\u6b3e`` (JSON's ASCII escapes), and marks its pages'
language so the browser picks the right fonts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from seatrial.case import Case
from seatrial.record import AssertionResult, AttemptRecord, AttemptSnapshot, RunInfo
from seatrial.store import Store
from seatrial.web._deps import html_lang
from tests.web.conftest import serve

RUN = "cjk-run"
CASE = "refund-status"
EXPECTED = "已退款"
REPLY = "您好，您的订单已退款，预计三个工作日内到账。"
REASON = "回复里没有提到退款单号"
AGENT_NAME = "客服助手"
ESCAPED = re.compile(r"\\u[0-9a-fA-F]{4}")
r"""A JSON ASCII escape such as ``\u5df2``: none may reach the reader."""


@pytest.fixture(scope="module")
def chinese(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``seatrial serve`` over one run of one Chinese case whose check failed."""
    folder = tmp_path_factory.mktemp("cjk")
    url = f"sqlite:///{folder / 'seatrial.db'}"
    case = Case.model_validate(
        {
            "id": CASE,
            "name": "查询退款进度",
            "input": "我的退款到哪一步了？",
            "assertions": [
                {"type": "contains", "value": EXPECTED},
                {"type": "not_contains", "value": "抱歉，我无法处理"},
            ],
        }
    )
    attempt = AttemptRecord(
        run_id=RUN,
        case_id=CASE,
        attempt=1,
        verdict="FAIL",
        failure_type="format",
        reason=REASON,
        assertions=[
            AssertionResult(
                id="contains",
                level="L2",
                type="contains",
                verdict="fail",
                reason=REASON,
                failure_type="format",
            )
        ],
        response=REPLY,
        responses=[REPLY],
        started_at=1_763_000_000.0,
        finished_at=1_763_000_001.0,
        snapshot=AttemptSnapshot(agent={"name": AGENT_NAME}),
    )
    with Store.open(url) as store:
        run = RunInfo(run_id=RUN, suite="售后", agent="python:shop:agent", started_at=1.7e9)
        store.create_run(run, [case])
        store.save_attempts([attempt])
        store.finish_run(RUN, "finished", 1.7e9 + 5)
    with serve(url, folder) as base:
        yield base


def fetch(url: str) -> httpx.Response:
    response = httpx.get(url, timeout=30)
    assert response.status_code == 200, f"{url}: {response.status_code} {response.text[:300]}"
    return response


def test_the_case_page_shows_chinese_assertions_and_the_reply_as_written(chinese):
    html = fetch(f"{chinese}/runs/{RUN}/cases/{CASE}").text
    assert f'"value": "{EXPECTED}"' in html
    assert "抱歉，我无法处理" in html
    assert REPLY in html
    assert REASON in html
    assert not ESCAPED.search(html), ESCAPED.search(html)


def test_the_attempt_page_shows_a_chinese_snapshot_as_written(chinese):
    html = fetch(f"{chinese}/runs/{RUN}/cases/{CASE}/1").text
    assert AGENT_NAME in html
    assert REPLY in html
    assert not ESCAPED.search(html), ESCAPED.search(html)


@pytest.mark.parametrize(
    "path",
    [f"/api/runs/{RUN}", f"/api/runs/{RUN}/cases/{CASE}", f"/api/runs/{RUN}/cases/{CASE}/1"],
)
def test_the_json_answers_carry_chinese_as_written(chinese, path):
    response = fetch(f"{chinese}{path}")
    assert response.headers["content-type"] == "application/json"
    body = response.content.decode("utf-8")
    assert REPLY in body
    assert not ESCAPED.search(body), ESCAPED.search(body)


def test_the_case_json_holds_the_assertion_as_written(chinese):
    document = fetch(f"{chinese}/api/runs/{RUN}/cases/{CASE}").json()
    assert {"type": "contains", "value": EXPECTED} in document["case"]["assertions"]
    assert EXPECTED in fetch(f"{chinese}/api/runs/{RUN}/cases/{CASE}").content.decode()


def test_pages_say_their_language_on_the_html_element(chinese):
    html = fetch(f"{chinese}/runs/{RUN}").text
    assert html.splitlines()[1] == '<html lang="en">'


@pytest.mark.parametrize(
    ("language", "lang"),
    [("zh", "zh-CN"), ("zh-CN", "zh-CN"), ("zh_CN", "zh-CN"), ("en", "en"), ("zhx", "en")],
)
def test_a_chinese_dashboard_language_marks_pages_zh_cn_and_any_other_en(language, lang):
    assert html_lang(language) == lang
