"""The compare pages (two runs; one case of both, aligned) and their JSON, over demo runs."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from seatrial.compare import compare_runs, diff_attempts, load_attempt, parse_attempt_ref
from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.store import Store
from seatrial.web import create_app
from tests.compare.test_compare import run_demo

FAILING = "read-missing-config"


@dataclass(frozen=True)
class Seeded:
    """The demo's v1 and v2 runs in a store, and a client of the dashboard over it."""

    store: Store
    client: TestClient
    v1: str
    v2: str


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """v1 and v2, run in-process by the real demo agents, tagged v1 and v2."""
    folder = tmp_path_factory.mktemp("compare-pages")
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as store:
        v1, v2 = run_demo(store, "v1"), run_demo(store, "v2")
        with TestClient(create_app(store)) as client:
            yield Seeded(store, client, v1, v2)


def listed(page: str, section: str) -> set[str]:
    """The case ids listed in one transition section of the compare page."""
    found = re.search(
        rf'<section class="transition[^"]*" id="{section}">(.*?)</section>', page, re.S
    )
    if found is None:
        return set()
    return set(re.findall(r'data-case="([^"]*)"', found.group(1)))


def test_compare_v1_to_v2_lists_exactly_the_regressed_cases(seeded: Seeded) -> None:
    page = seeded.client.get("/compare?base=v1&cand=v2")
    assert page.status_code == 200
    assert listed(page.text, "regressed") == set(EXPECTED_V2_FAILURES)
    assert listed(page.text, "fixed") == set()
    # Each regressed case links to its aligned traces.
    for case_id in EXPECTED_V2_FAILURES:
        link = f"/compare/case?base={seeded.v1}&amp;cand={seeded.v2}&amp;case={case_id}"
        assert link in page.text


def test_the_category_table_shows_each_category_with_its_intervals(seeded: Seeded) -> None:
    comparison = compare_runs(seeded.store, seeded.v1, seeded.v2)
    page = seeded.client.get(f"/compare?base={seeded.v1}&cand={seeded.v2}")
    table = html.unescape(page.text.split('id="categories"', 1)[1].split("</table>", 1)[0])
    for group in [*comparison.categories, comparison.overall]:
        assert group.base.format() in table and group.cand.format() in table
    assert f"{comparison.overall.paired.p_value:.3g}" in table
    failure_table = page.text.split('class="failure-shift"', 1)[1].split("</table>", 1)[0]
    for name in comparison.failure_types:
        assert f"<code>{name}</code>" in failure_table


def test_compare_without_runs_offers_a_form_of_recent_runs(seeded: Seeded) -> None:
    page = seeded.client.get("/compare")
    assert page.status_code == 200
    assert '<select name="base">' in page.text and '<select name="cand">' in page.text
    assert seeded.v1 in page.text and seeded.v2 in page.text


def test_compare_case_marks_the_first_divergence_at_read_file(seeded: Seeded) -> None:
    page = seeded.client.get(f"/compare/case?base=v1&cand=v2&case={FAILING}")
    assert page.status_code == 200
    assert page.text.count('id="first-divergence"') == 1
    row = re.search(r'<tr id="first-divergence" class="divergent">(.*?)</tr>', page.text, re.S)
    assert row is not None and "read_file" in row.group(1)
    assert 'href="#first-divergence"' in page.text
    # The row is where the library finds the divergence.
    a = load_attempt(seeded.store, parse_attempt_ref(seeded.store, seeded.v1, case=FAILING))
    b = load_attempt(seeded.store, parse_attempt_ref(seeded.store, seeded.v2, case=FAILING))
    first = diff_attempts(a, b).first
    assert first is not None
    assert f'<td class="num">{first.row + 1}</td>' in row.group(1)
    assert first.kind in html.unescape(page.text.split('id="divergence-banner"')[1])


def test_a_case_compared_with_itself_is_identical(seeded: Seeded) -> None:
    record = load_attempt(seeded.store, parse_attempt_ref(seeded.store, seeded.v1, case=FAILING))
    steps = len(diff_attempts(record, record).rows)
    page = seeded.client.get(f"/compare/case?base=v1&cand=v1&case={FAILING}")
    assert f"identical trajectories ({steps} steps)" in page.text
    assert 'id="first-divergence"' not in page.text


@pytest.mark.parametrize(
    "path",
    [
        "/compare?base=no-such-run&cand=v2",
        "/compare/case?base=v1&cand=v2&case=no-such-case",
        f"/compare/case?base=v1&cand=v2&case={FAILING}&a=7",
        "/api/compare?base=v1&cand=no-such-run",
        "/api/diff?base=v1&cand=v2&case=no-such-case",
    ],
)
def test_unknown_runs_cases_and_attempts_are_404(seeded: Seeded, path: str) -> None:
    answer = seeded.client.get(path)
    assert answer.status_code == 404
    if path.startswith("/api/"):
        assert answer.json()["detail"]
    else:
        assert 'id="not-found"' in answer.text


def test_the_compare_json_is_the_comparison(seeded: Seeded) -> None:
    data = seeded.client.get("/api/compare?base=v1&cand=v2").json()
    assert set(data["transitions"]["regressed"]) == set(EXPECTED_V2_FAILURES)
    assert data["base"]["run_id"] == seeded.v1 and data["candidate"]["run_id"] == seeded.v2
    expected = compare_runs(seeded.store, seeded.v1, seeded.v2).overall.change.estimate
    assert data["overall"]["change"]["estimate"] == pytest.approx(expected)


def test_the_diff_json_names_the_first_divergence(seeded: Seeded) -> None:
    data = seeded.client.get(f"/api/diff?base=v1&cand=v2&case={FAILING}").json()
    assert data["identical"] is False
    first = data["first_divergence"]
    step = first["b"] or first["a"]
    assert "read_file" in step["label"]
    assert data["a"]["run_id"] == seeded.v1 and data["b"]["verdict"] == "FAIL"
    assert len(data["rows"]) == data["counts"]["rows"]
