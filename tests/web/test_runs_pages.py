"""The Runs and Run pages and their JSON over a store holding real demo runs (v1 and v2)."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from statsmodels.stats.proportion import proportion_confint

from seatrial.agent import resolve_agent
from seatrial.case import Case, load_suite
from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import PROJECT, SUITE
from seatrial.record import AttemptRecord, RunInfo
from seatrial.run import RunOptions, run_suite_async
from seatrial.store import Store
from seatrial.web import _runs
from seatrial.web._app import create_app


def run_demo(store: Store, version: str) -> str:
    """Run the demo agent ``version`` over the demo suite, tagged with its version."""

    async def go() -> str:
        adapter = resolve_agent(f"python:seatrial.demo.agents:{version}", base_dir=PROJECT)
        try:
            options = RunOptions(tags=[version], concurrency=8)
            return (await run_suite_async(load_suite(SUITE), adapter, store, options)).run_id
        finally:
            await adapter.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str, str]]:
    """A store with one v1 run, then one v2 run; yields it and the two run ids."""
    folder = tmp_path_factory.mktemp("runs-pages")
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as store:
        v1 = run_demo(store, "v1")
        v2 = run_demo(store, "v2")
        yield store, v1, v2


@pytest.fixture
def client(demo: tuple[Store, str, str]) -> TestClient:
    """The dashboard over the demo store (a fresh app: nothing cached)."""
    return TestClient(create_app(demo[0]))


def run_rows(html: str) -> list[str]:
    """The run ids the runs table lists, in order."""
    return re.findall(r'<tr class="run-row" data-run="([^"]+)"', html)


def row_of(html: str, run_id: str) -> str:
    """The runs table's row of one run."""
    found = re.search(rf'<tr class="run-row" data-run="{run_id}">(.*?)</tr>', html, re.S)
    assert found, f"run {run_id} is not listed"
    return found.group(1)


def interval_text(passes: int, n: int) -> str:
    """The pass rate and its Wilson interval as the page prints them (statsmodels' figures)."""
    low, high = proportion_confint(passes, n, method="wilson")
    return f"{passes / n * 100:.1f}%", f"[{low * 100:.1f}%, {high * 100:.1f}%]"


def test_the_root_redirects_to_the_runs_list(client: TestClient) -> None:
    reply = client.get("/", follow_redirects=False)
    assert reply.status_code in (303, 307) and reply.headers["location"] == "/runs"


def test_the_runs_list_shows_both_runs_newest_first_with_interval_and_gate(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, v1, v2 = demo
    html = client.get("/runs").text
    assert run_rows(html) == [v2, v1]
    for run_id, gate in ((v1, '<span class="met">met</span>'), (v2, "NOT met")):
        records = store.attempts(run_id)
        passes = sum(r.verdict == "PASS" for r in records)
        estimate, interval = interval_text(passes, len(records))
        row = row_of(html, run_id)
        assert estimate in row and interval in row
        assert gate in row
    assert '<span class="unmet">NOT met</span>' in row_of(html, v2)


def test_the_runs_list_filters_by_tag_suite_and_date(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, v1, v2 = demo
    assert run_rows(client.get("/runs", params={"tag": "v1"}).text) == [v1]
    assert run_rows(client.get("/runs", params={"tag": "v2"}).text) == [v2]
    suite = store.get_run(v1).suite
    assert run_rows(client.get("/runs", params={"suite": suite}).text) == [v2, v1]
    assert run_rows(client.get("/runs", params={"suite": "no-such-suite"}).text) == []
    assert run_rows(client.get("/runs", params={"until": "2000-01-01"}).text) == []
    assert run_rows(client.get("/runs", params={"since": "2000-01-01"}).text) == [v2, v1]
    bad = client.get("/runs", params={"since": "yesterday"})
    assert bad.status_code == 400 and "YYYY-MM-DD" in bad.text


def test_the_runs_list_pages_with_next_and_previous_links(
    client: TestClient, demo: tuple[Store, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, v1, v2 = demo
    monkeypatch.setattr(_runs, "PAGE_SIZE", 1)
    first = client.get("/runs", params={"tag": ""}).text
    assert run_rows(first) == [v2]
    assert 'href="/runs?page=2"' in first and 'rel="prev"' not in first
    second = client.get("/runs?page=2").text
    assert run_rows(second) == [v1]
    assert 'href="/runs?page=1"' in second and 'rel="next"' not in second
    api = client.get("/api/runs", params={"page": 2}).json()
    assert [r["run_id"] for r in api["runs"]] == [v1] and api["has_next"] is False


def test_the_run_page_shows_the_category_verdict_matrix_from_the_store(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, _, v2 = demo
    category = {case.id: case.category for case in store.run_cases(v2)}
    expected = Counter((category[r.case_id], r.verdict) for r in store.attempts(v2))
    html = client.get(f"/runs/{v2}").text
    assert html.count("<h1>") == 1
    matrix = re.search(r'<table id="matrix">(.*?)</table>', html, re.S)
    assert matrix
    for name in set(category.values()):
        row = re.search(rf'<tr data-category="{name}">(.*?)</tr>', matrix.group(1), re.S)
        assert row, f"category {name} missing from the matrix"
        cells = dict(re.findall(r'data-verdict="(\w+)">(\d+)<', row.group(1)))
        assert cells == {v: str(expected[(name, v)]) for v in ("PASS", "FAIL", "WARNING", "ERROR")}


def test_the_run_page_shows_gates_and_the_failing_cases_of_v2_with_their_types(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    _, v1, v2 = demo
    html = client.get(f"/runs/{v2[:-2]}").text  # a prefix of the id works too
    gates = re.search(r'<table id="gates">(.*?)</table>', html, re.S)
    assert gates and "p0_cases" in gates.group(1)
    assert '<span class="unmet">NOT met</span>' in gates.group(1)
    for case_id, failure_type in EXPECTED_V2_FAILURES.items():
        row = re.search(rf'<tr class="case-row" data-case="{case_id}">(.*?)</tr>', html, re.S)
        assert row, f"case {case_id} missing"
        assert '<span class="FAIL">FAIL</span>' in row.group(1)
        assert f'<td class="failure-type">{failure_type}</td>' in row.group(1)
    failures = re.search(r'<table id="failures">(.*?)</table>', html, re.S)
    assert failures
    for failure_type, count in Counter(EXPECTED_V2_FAILURES.values()).items():
        assert f'<td>{failure_type}</td><td class="num">{count}</td>' in failures.group(1)
    # No baseline stored: the compare link goes to the previous run of the suite.
    assert f'href="/compare?base={v1}&amp;cand={v2}"' in html


def test_an_unknown_run_is_a_404_page_that_says_so(client: TestClient) -> None:
    reply = client.get("/runs/ffffffffdeadbeef")
    assert reply.status_code == 404
    assert "ffffffffdeadbeef" in reply.text and "<h1>Run not found</h1>" in reply.text
    assert client.get("/api/runs/ffffffffdeadbeef").status_code == 404


def test_the_json_routes_return_the_documented_fields(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, v1, v2 = demo
    listed = client.get("/api/runs").json()
    assert {"page", "page_size", "has_next", "runs"} <= listed.keys()
    by_id = {row["run_id"]: row for row in listed["runs"]}
    assert by_id[v1]["gate_met"] is True and by_id[v2]["gate_met"] is False
    records = store.attempts(v2)
    assert by_id[v2]["attempts"] == len(records)
    assert by_id[v2]["cost_usd"] == pytest.approx(sum(r.metrics.cost_usd for r in records))
    low, high = proportion_confint(by_id[v2]["passed"], len(records), method="wilson")
    assert by_id[v2]["pass_rate_low"] == pytest.approx(low)
    assert by_id[v2]["pass_rate_high"] == pytest.approx(high)
    trends = client.get("/api/trends").json()["runs"]
    assert [p["run_id"] for p in trends] == [v1, v2]  # oldest first
    tokens = sum(r.metrics.tokens for r in records)
    assert trends[1]["tokens"] == tokens and trends[1]["p95_ms"] > 0
    report = client.get(f"/api/runs/{v2}").json()
    assert report["run_id"] == v2 and report["gate"]["passed"] is False
    assert {"summary", "statistics", "gate", "flaky", "categories", "cases"} <= report.keys()
    schema = client.get("/api/openapi.json").json()
    assert {"/api/runs", "/api/trends", "/api/runs/{run_ref}"} <= schema["paths"].keys()


def test_an_agent_reply_with_a_script_is_escaped_on_the_run_page(store: Store) -> None:
    info = RunInfo(run_id="c0ffee" * 4, suite="xss", agent="evil", status="finished")
    store.create_run(info, [Case(id="evil-case", input="hi", category="<b>cat</b>")])
    attack = "<script>alert('pwned')</script>"
    store.save_attempts(
        [
            AttemptRecord(
                run_id=info.run_id,
                case_id="evil-case",
                attempt=1,
                verdict="FAIL",
                failure_type="wrong_answer",
                reason=f"the reply was {attack}",
                response=attack,
                responses=[attack],
            )
        ]
    )
    html = TestClient(create_app(store)).get(f"/runs/{info.run_id}").text
    assert "evil-case" in html
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(" in html
    assert "<b>cat</b>" not in html
    # No gate was written: the page says every case must pass, and this one failed.
    assert '<p class="muted" id="gates-rule">No gate configured: every case must pass.</p>' in html
    assert "every_case" in html


def test_the_trend_reads_its_figures_for_the_same_filters_from_the_api(
    client: TestClient, demo: tuple[Store, str, str], tmp_path: Path
) -> None:
    _, v1, v2 = demo
    html = client.get("/runs?tag=v1").text
    source = re.search(r'<div class="trend-charts" id="trend" data-source="([^"]+)"', html)
    assert source and source.group(1) == "/api/trends?tag=v1"
    assert '<a href="/api/trends?tag=v1">' in html  # for pages without scripts
    points = client.get(source.group(1)).json()["runs"]
    assert [p["run_id"] for p in points] == [v1]
    assert client.get("/api/trends").json()["runs"][-1]["run_id"] == v2


def test_the_run_page_leads_with_the_failing_cases_and_why(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, _, v2 = demo
    html = client.get(f"/runs/{v2}").text
    assert html.index('id="failing"') < html.index('id="summary"') < html.index('id="cases"')
    failing = re.search(r'<table id="failing-cases">(.*?)</table>', html, re.S)
    assert failing
    rows = re.findall(
        r'<tr class="failing-row" data-case="([^"]+)">(.*?)</tr>', failing.group(1), re.S
    )
    assert {case_id for case_id, _ in rows} == set(EXPECTED_V2_FAILURES)
    priorities = [re.findall(r"<td>(P\d)</td>", row)[0] for _, row in rows]
    assert priorities == sorted(priorities) and priorities[0] == "P0"
    for case_id, row in rows:
        first = next(a for a in store.attempts(v2, case_id=case_id) if a.verdict != "PASS")
        assert f'<code class="failure-type">{EXPECTED_V2_FAILURES[case_id]}</code>' in row
        assert first.reason[:60].replace('"', "&#34;") in row


def test_a_run_whose_cases_all_passed_says_so_where_failures_would_lead(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, v1, _ = demo
    assert all(a.verdict == "PASS" for a in store.attempts(v1))
    html = client.get(f"/runs/{v1}").text
    assert '<p class="all-passed">Every case passed.</p>' in html
    assert 'class="failing-row"' not in html


def test_the_case_list_puts_the_cases_that_did_not_pass_before_the_passing_ones(
    client: TestClient, demo: tuple[Store, str, str]
) -> None:
    store, _, v2 = demo
    html = client.get(f"/runs/{v2}").text
    listed = re.findall(r'<tr class="case-row" data-case="([^"]+)">', html)
    suite_order = [case.id for case in store.run_cases(v2)]
    failing = [c for c in suite_order if c in EXPECTED_V2_FAILURES]
    assert listed == failing + [c for c in suite_order if c not in EXPECTED_V2_FAILURES]
