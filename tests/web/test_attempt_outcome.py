"""The attempt page shows what the agent ended with: every turn's reply and its final state.

A multi-turn case is judged on each reply and on the state the agent reported at the end
(``final_state``); a person reading the timeline needs both next to it, Chinese as written.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from seatrial.case import Case
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.web import create_app

RUN = "outcome-run"
TWO_TURNS = "two-turns"
ONE_TURN = "one-turn"
REPLIES = ["请提供订单号。", "订单 A1024 已退款，三个工作日内到账。"]
FINAL_STATE = {"orders": {"A1024": {"status": "已退款", "amount": 128.5}}}


def attempt(case_id: str, responses: list[str], final_state: dict | None) -> AttemptRecord:
    return AttemptRecord(
        run_id=RUN,
        case_id=case_id,
        attempt=1,
        verdict="PASS",
        response=responses[-1],
        responses=responses,
        final_state=final_state,
        started_at=1_763_000_000.0,
        finished_at=1_763_000_001.0,
    )


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The dashboard over one run: a two-turn case with a final state, a one-turn one without."""
    folder = tmp_path_factory.mktemp("outcome")
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as store:
        run = RunInfo(run_id=RUN, suite="售后", agent="python:shop:agent", started_at=1.7e9)
        store.create_run(run, [Case(id=TWO_TURNS, input="退款"), Case(id=ONE_TURN, input="你好")])
        store.save_attempts(
            [
                attempt(TWO_TURNS, REPLIES, FINAL_STATE),
                attempt(ONE_TURN, ["您好，有什么可以帮您？"], None),
            ]
        )
        store.finish_run(RUN, "finished", 1.7e9 + 5)
        yield TestClient(create_app(store))


def section(page: str, element_id: str) -> str:
    found = re.search(rf'<(ol|pre|p)[^>]* id="{element_id}"[^>]*>(.*?)</\1>', page, re.S)
    assert found, f"no #{element_id} on the page"
    return html.unescape(found.group(2))


def test_the_attempt_page_shows_every_turns_reply_in_order_after_the_timeline(client) -> None:
    page = client.get(f"/runs/{RUN}/cases/{TWO_TURNS}/1").text
    replies = section(page, "replies")
    assert replies.index(REPLIES[0]) < replies.index(REPLIES[1])
    assert "turn 1" in replies and "turn 2" in replies
    assert page.index('id="timeline"') < page.index('id="replies"') < page.index('id="final-state"')


def test_the_attempt_page_shows_the_final_state_as_json_with_chinese_as_written(client) -> None:
    page = client.get(f"/runs/{RUN}/cases/{TWO_TURNS}/1").text
    shown = section(page, "final-state")
    assert json.loads(shown) == FINAL_STATE
    assert '"status": "已退款"' in shown


def test_an_attempt_without_a_final_state_says_the_agent_reported_none(client) -> None:
    page = client.get(f"/runs/{RUN}/cases/{ONE_TURN}/1").text
    assert "reported no final state" in section(page, "final-state")
    replies = section(page, "replies")
    assert "您好，有什么可以帮您？" in replies and "turn 1" not in replies
