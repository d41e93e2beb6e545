"""Another site cannot use a person's browser against the dashboard on their machine.

Without a token ``seatrial serve`` answers only under loopback names (no DNS rebinding), and
refuses every change whose Origin is another site (no cross-site request forgery).
"""

from __future__ import annotations

import httpx

from seatrial.store import Store
from tests.web.conftest import DemoStore


def status_of(demo_store: DemoStore) -> str:
    with Store.open(demo_store.url) as store:
        return store.review_item(demo_store.item_id).status


def test_a_label_posted_from_another_site_is_refused(dashboard: str, demo_store: DemoStore):
    answer = httpx.post(
        f"{dashboard}/review/{demo_store.item_id}",
        data={"label": "pass", "who": "mallory"},
        headers={"Origin": "http://evil.example"},
    )
    assert answer.status_code == 403
    assert status_of(demo_store) == "open"


def test_a_request_under_a_foreign_host_name_is_refused(dashboard: str):
    answer = httpx.get(f"{dashboard}/runs", headers={"Host": "evil.example"})
    assert answer.status_code == 403
    assert "--token" in answer.text
    assert httpx.get(f"{dashboard}/runs").status_code == 200


def test_a_label_must_name_the_item_in_full(dashboard: str, demo_store: DemoStore):
    answer = httpx.post(
        f"{dashboard}/review/{demo_store.item_id[:1]}",
        data={"label": "pass", "who": "alice"},
        headers={"Origin": dashboard},
    )
    assert answer.status_code == 404
    assert status_of(demo_store) == "open"
