"""The review queue (label in the browser) and the judge calibration page."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient
from sklearn.metrics import cohen_kappa_score

from seatrial.case import Case
from seatrial.judge import Calibration, agreement_report
from seatrial.record import RunInfo
from seatrial.store import ReviewItem, Store
from seatrial.web import create_app
from tests.conftest import queued_items

REPLY = "<script>alert('owned')</script> refund done"


def items() -> list[ReviewItem]:
    return queued_items(refund_output=REPLY)


def seeded(store: Store, user: str = "") -> tuple[TestClient, list[ReviewItem]]:
    queued = items()
    store.add_review_items(queued)
    return TestClient(create_app(store, user=user), follow_redirects=False), queued


def test_the_queue_lists_open_items_linking_to_each(store: Store) -> None:
    client, queued = seeded(store)
    page = client.get("/review")
    assert page.status_code == 200
    for item in queued:
        assert f'href="/review/{item.id}"' in page.text
    assert '<span class="WARNING">WARNING</span>' in page.text
    api = client.get("/api/review").json()
    assert [i["id"] for i in api["items"]] == [i.id for i in queued]
    assert api["total"] == 3


def test_labelling_in_the_browser_stores_who_labelled_and_moves_on(store: Store) -> None:
    client, queued = seeded(store, user="server-user")
    first, second = queued[0], queued[1]
    form = client.get(f"/review/{first.id}").text
    assert 'name="who" value="server-user"' in form
    response = client.post(
        f"/review/{first.id}",
        data={
            "label": "fail",
            "who": "alice",
            "note": "no refund ran",
            "failure_type": "hallucination",
        },
    )
    assert response.status_code == 303
    assert response.headers["location"].startswith(f"/review/{second.id}?")
    labelled = store.review_item(first.id)
    assert (labelled.status, labelled.label, labelled.who) == ("labelled", "fail", "alice")
    assert labelled.failure_type == "hallucination" and labelled.note == "no refund ran"
    [label] = store.labels(source="review")
    assert (label.item_id, label.label, label.who) == (first.id, "fail", "alice")
    following = client.get(response.headers["location"]).text
    assert "by alice" in following
    assert [i.id for i in store.review_items()] == [second.id, queued[2].id]
    assert [
        i["id"] for i in client.get("/api/review", params={"status": "labelled"}).json()["items"]
    ] == [first.id]


def test_skip_leaves_the_item_open_and_the_last_item_returns_to_the_queue(store: Store) -> None:
    client, queued = seeded(store)
    skipped = client.post(f"/review/{queued[1].id}", data={"label": "skip", "who": "bob"})
    assert skipped.headers["location"].startswith(f"/review/{queued[2].id}?")
    assert store.review_item(queued[1].id).status == "open"
    last = client.post(f"/review/{queued[2].id}", data={"label": "pass", "who": "bob"})
    assert last.status_code == 303 and last.headers["location"].startswith("/review?")
    assert "Labelled" in client.get(last.headers["location"]).text
    assert store.review_item(queued[2].id).who == "bob"


def test_without_anyone_named_the_server_user_labels(store: Store) -> None:
    client, queued = seeded(store, user="carol")
    client.post(f"/review/{queued[0].id}", data={"label": "pass", "who": ""})
    assert store.review_item(queued[0].id).who == "carol"


def test_a_bad_label_is_a_400_saying_what_is_allowed(store: Store) -> None:
    client, queued = seeded(store)
    response = client.post(f"/review/{queued[0].id}", data={"label": "maybe", "who": "alice"})
    assert response.status_code == 400
    assert "pass, fail, skip" in response.text
    assert store.review_item(queued[0].id).status == "open"
    assert store.labels() == []


def test_an_unknown_item_is_a_404(store: Store) -> None:
    client, _ = seeded(store)
    assert client.get("/review/ffffffffffff").status_code == 404
    response = client.post("/review/ffffffffffff", data={"label": "pass", "who": "alice"})
    assert response.status_code == 404
    assert store.labels() == []


def test_a_reply_with_a_script_tag_renders_escaped(store: Store) -> None:
    client, queued = seeded(store)
    page = client.get(f"/review/{queued[0].id}").text
    assert "<script>alert(" not in page
    shown = re.search(r'<pre id="item-output">(.*?)</pre>', page, re.S)
    assert shown is not None and html.unescape(shown[1]) == REPLY


def test_the_calibration_page_lists_a_stored_calibration_with_kappa(store: Store) -> None:
    human = ["pass", "pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail", "pass"]
    judge = ["pass", "fail", "fail", "fail", "pass", "pass", "pass", "pass", "fail", "pass"]
    report = agreement_report(human, judge, positive_label="pass", resamples=200)
    interval = report.kappa_interval
    assert interval is not None and report.kappa is not None
    store.save_calibration(
        Calibration(
            judge_model="judge-a",
            prompt_hash="ab" * 32,
            prompt_version="v2",
            created_at=1_763_000_000.0,
            items=report.items,
            agreement=report.agreement,
            kappa=report.kappa,
            kappa_low=interval.low,
            kappa_high=interval.high,
            base_rate=report.base_rate,
            report=report.model_dump(mode="json"),
        )
    )
    client, queued = seeded(store)
    client.post(f"/review/{queued[0].id}", data={"label": "pass", "who": "alice"})
    page = client.get("/calibration")
    assert page.status_code == 200
    expected_kappa = cohen_kappa_score(human, judge)
    agreement = sum(h == j for h, j in zip(human, judge, strict=True)) / len(human)
    row = re.search(r'<tr class="calibration-row">(.*?)</tr>', page.text, re.S)
    assert row is not None
    assert "judge-a" in row[1] and "v2" in row[1]
    assert f"{expected_kappa:.3f}" in row[1]
    assert f"{agreement * 100:.1f}%" in row[1]
    assert f"[{interval.low:.3f}, {interval.high:.3f}]" in row[1]
    assert "1 from review" in page.text
    api = client.get("/api/calibrations").json()
    assert abs(api["calibrations"][0]["kappa"] - expected_kappa) < 1e-9
    assert api["labels"] == {"review": 1}


CRITERIA = "说明退款结果，不编造没有执行的操作"
SUITE_RUBRIC = "退款类回复必须以退款工具的结果为准"
OWN_RUBRIC = "预约成功时给出时间和地点"


def stored_run(store: Store) -> None:
    """Run ``run-1`` as the queued items' judge saw it: ``refund`` names its criteria (the
    suite's rubric for 退款 applies), ``booking`` brings a rubric of its own."""
    info = RunInfo.model_validate(
        {
            "run_id": "run-1",
            "suite": "support",
            "agent": "python:bot:answer",
            "started_at": 1_763_000_000.0,
            "settings": {"rubrics": {"退款": SUITE_RUBRIC, "预约": "不该被读到"}},
        }
    )
    cases = [
        Case.model_validate(
            {
                "id": "refund",
                "input": "我要退款，订单 A1001",
                "category": "退款",
                "assertions": [{"id": "judge", "type": "semantic", "criteria": CRITERIA}],
            }
        ),
        Case.model_validate(
            {
                "id": "booking",
                "input": "帮我预约周五的号",
                "category": "预约",
                "assertions": [{"id": "judge", "type": "llm_judge", "rubric": OWN_RUBRIC}],
            }
        ),
    ]
    store.create_run(info, cases)


def test_the_item_shows_the_criteria_and_the_rubric_the_judge_was_given(store: Store) -> None:
    client, queued = seeded(store)
    stored_run(store)

    refund = client.get(f"/review/{queued[0].id}").text
    assert "<code>llm_judge</code>" in refund
    assert CRITERIA in refund and SUITE_RUBRIC in refund
    # The assertion's own rubric replaces the suite's for its category, as the judge read it.
    booking = client.get(f"/review/{queued[1].id}").text
    assert OWN_RUBRIC in booking and "不该被读到" not in booking


def test_an_item_whose_run_is_gone_says_so_instead_of_criteria(store: Store) -> None:
    client, queued = seeded(store)  # run-1 and run-2 were never stored

    page = client.get(f"/review/{queued[0].id}")

    assert page.status_code == 200
    assert "no longer holds its case or assertion" in page.text


def test_the_browser_remembers_who_labelled_last_and_another_browser_does_not(
    store: Store,
) -> None:
    client, queued = seeded(store, user="server-user")
    client.post(f"/review/{queued[0].id}", data={"label": "pass", "who": "张三"})

    assert 'name="who" value="张三"' in client.get(f"/review/{queued[1].id}").text
    # Skipping labels nobody: the name stays.
    client.post(f"/review/{queued[1].id}", data={"label": "skip", "who": "李四"})
    assert 'name="who" value="张三"' in client.get(f"/review/{queued[2].id}").text
    other = TestClient(create_app(store, user="server-user"), follow_redirects=False)
    assert 'name="who" value="server-user"' in other.get(f"/review/{queued[2].id}").text
