"""The /daily page: the daily report of a day in the dashboard, the same body as the file."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

from seatrial.report import daily_html_body, daily_report
from seatrial.store import Store
from seatrial.web import create_app
from tests.report.test_daily import DAY, DENIED, LOOP, store_run


def local(day: dt.date, hour: int) -> float:
    """Unix time of ``hour`` o'clock on ``day`` in this machine's time zone (the server's)."""
    return dt.datetime.combine(day, dt.time(hour)).timestamp()


def seeded(tmp_path) -> tuple[Store, dict[str, str]]:
    store = Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}")
    before = store_run(
        store, "support", local(DAY - dt.timedelta(days=1), 12), {"refund": ["", ""]}
    )
    today = store_run(
        store,
        "support",
        local(DAY, 12),
        {"refund": [DENIED, DENIED], "<b>lookup</b>": [LOOP.format(n=4), LOOP.format(n=5)]},
    )
    return store, {"before": before, "today": today}


def test_the_daily_page_shows_the_days_runs_new_failures_and_clusters(tmp_path):
    store, runs = seeded(tmp_path)
    with store:
        page = TestClient(create_app(store)).get("/daily", params={"date": DAY.isoformat()})
        body = daily_html_body(daily_report(store, DAY), links=True)

    assert page.status_code == 200
    html = page.text
    assert "<h1>Daily report 2026-03-10</h1>" in html
    assert body in html  # the same fragment as the report file, not a second rendering
    assert f'<a href="/runs/{runs["today"]}">{runs["today"]}</a>' in html
    assert f'<a href="/runs/{runs["before"]}">{runs["before"]}</a>' in html
    assert 'id="new-failures"' in html and "<td>refund</td>" in html
    assert 'id="failure-clusters"' in html and "permission_violation" in html
    assert "&lt;b&gt;lookup&lt;/b&gt;" in html and "<b>lookup" not in html
    assert 'href="/daily?date=2026-03-09"' in html and 'href="/daily?date=2026-03-11"' in html


def test_a_day_without_runs_and_a_date_that_is_not_one(tmp_path):
    store, _ = seeded(tmp_path)
    with store:
        client = TestClient(create_app(store))
        empty = client.get("/daily", params={"date": "2026-04-01"})
        wrong = client.get("/daily", params={"date": "2026-02-30"})
        today = client.get("/daily")

    assert empty.status_code == 200 and "No run started that day." in empty.text
    assert wrong.status_code == 400
    assert "&#39;2026-02-30&#39; is not a date: write it as YYYY-MM-DD" in wrong.text
    assert today.status_code == 200
    assert f"Daily report {dt.date.today().isoformat()}" in today.text


def test_the_navigation_links_to_the_daily_page(tmp_path):
    store, _ = seeded(tmp_path)
    with store:
        runs_page = TestClient(create_app(store)).get("/runs")
    assert '<a href="/daily">Daily</a>' in runs_page.text
