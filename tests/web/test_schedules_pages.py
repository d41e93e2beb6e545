"""``/schedules`` and ``/api/schedules``: each schedule's next due time and last run."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from seatrial.config import ScheduleConfig
from seatrial.store import Store, claim_schedule, finish_schedule
from seatrial.web import create_app

NIGHTLY = ScheduleConfig(
    name="nightly", cron="0 2 * * *", timezone="Asia/Shanghai", tier="nightly", grace_s=600
)
HOURLY = ScheduleConfig(name="hourly", cron="15 * * * *", suites=["suites/"])
DUE = dt.datetime(2026, 12, 1, 18, 0, tzinfo=dt.UTC)  # 02:00 on Dec 2 in Shanghai


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def test_the_api_shows_the_next_due_time_and_the_last_run(store: Store) -> None:
    at = DUE.timestamp()
    claim_schedule(store, "nightly", at - 86_400, claimed_by="a:1", now=at - 86_400)
    finish_schedule(store, "nightly", at - 86_400, status="ok", now=at - 86_000)
    claim_schedule(store, "nightly", at, claimed_by="b:2", now=at + 1)
    finish_schedule(store, "nightly", at, status="failed", run_ids=["r1", "r2"], now=at + 300)
    before = dt.datetime.now(dt.UTC)
    client = TestClient(create_app(store, schedules=[NIGHTLY, HOURLY], scheduling=True))
    answer = client.get("/api/schedules").json()
    assert answer["scheduling"] is True
    nightly, hourly = answer["schedules"]
    assert (nightly["name"], nightly["job"], nightly["timezone"]) == (
        "nightly",
        "tier nightly",
        "Asia/Shanghai",
    )
    next_due = dt.datetime.fromisoformat(nightly["next_due_at"])
    assert next_due > before and next_due - before <= dt.timedelta(days=1)
    assert next_due.strftime("%H:%M %z") == "02:00 +0800"
    assert nightly["last"] == {
        "due_at": "2026-12-02T02:00:00+08:00",
        "due": "2026-12-02 02:00 Asia/Shanghai",
        "status": "failed",
        "run_ids": ["r1", "r2"],
        "error": None,
        "claimed_by": "b:2",
        "finished_at": dt.datetime.fromtimestamp(at + 300, dt.UTC).isoformat(),
    }
    assert hourly["last"] is None and hourly["job"] == "suites suites/"


def test_the_page_lists_each_schedule_and_escapes_stored_errors(store: Store) -> None:
    at = DUE.timestamp()
    claim_schedule(store, "nightly", at, claimed_by="b:2", now=at)
    finish_schedule(store, "nightly", at, status="error", error="<script>x</script>", now=at)
    page = TestClient(create_app(store, schedules=[NIGHTLY, HOURLY])).get("/schedules")
    assert page.status_code == 200
    assert 'data-schedule="nightly"' in page.text and 'data-schedule="hourly"' in page.text
    assert "2026-12-02 02:00 Asia/Shanghai" in page.text
    assert "&lt;script&gt;x&lt;/script&gt;" in page.text and "<script>x" not in page.text
    assert "not run yet" in page.text
    assert "does not run the schedules" in page.text  # scheduling is off on this server
    assert '<a href="/schedules">Schedules</a>' in page.text


def test_without_schedules_the_page_says_how_to_add_one(store: Store) -> None:
    client = TestClient(create_app(store))
    assert client.get("/api/schedules").json() == {"scheduling": False, "schedules": []}
    assert 'id="no-schedules"' in client.get("/schedules").text
