"""Leaderboard and coverage pages over runs of the real demo agents."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from pathlib import Path

from fastapi.testclient import TestClient

from seatrial.agent import Session, resolve_agent
from seatrial.case import load_suite
from seatrial.compare import mean_pass_hat_k, wilson_interval
from seatrial.demo._demo import PROJECT, SUITE
from seatrial.run import RunOptions, run_suite_async
from seatrial.store import Store
from seatrial.web import create_app

DEMO_SUITE = "workspace-agent"


def routes_to_skills(message: str, session: Session) -> str:
    """An agent reporting skill routing: refunds for refund requests, else small talk."""
    session.skill("refunds" if "refund" in message else "small-talk")
    return "done"


def run_demo(store: Store, version: str, suite: Path = SUITE, repeats: int = 1) -> str:
    """Run a demo agent (or a ``python:`` spec) over a suite in-process; return the run id."""

    async def go() -> str:
        spec = version if ":" in version else f"python:seatrial.demo.agents:{version}"
        adapter = resolve_agent(spec, base_dir=PROJECT)
        try:
            options = RunOptions(repeats=repeats, tags=[version], concurrency=8)
            return (await run_suite_async(load_suite(suite), adapter, store, options)).run_id
        finally:
            await adapter.aclose()

    return asyncio.run(go())


def pass_rate(store: Store, run_id: str) -> tuple[int, int]:
    records = store.attempts(run_id)
    return sum(r.verdict == "PASS" for r in records), len(records)


def tool_figures(store: Store, run_id: str) -> dict[str, dict[str, object]]:
    """Per tool, from the stored traces: cases, attempts, passed attempts, calls, errors."""
    figures: dict[str, dict[str, object]] = defaultdict(
        lambda: {"cases": set(), "attempts": set(), "passed": set(), "calls": 0, "errors": 0}
    )
    for record in store.attempts(run_id, with_traces=True):
        assert record.trace is not None
        for call in record.trace.tool_calls():
            entry = figures[call.name]
            entry["cases"].add(record.case_id)  # type: ignore[attr-defined]
            entry["attempts"].add((record.case_id, record.attempt))  # type: ignore[attr-defined]
            if record.verdict == "PASS":
                entry["passed"].add((record.case_id, record.attempt))  # type: ignore[attr-defined]
            entry["calls"] += 1  # type: ignore[operator]
            entry["errors"] += not call.success  # type: ignore[operator]
    return figures


def test_the_leaderboard_ranks_v1_above_v2_with_the_stored_pass_rates(store: Store) -> None:
    v2 = run_demo(store, "v2")
    v1 = run_demo(store, "v1")
    client = TestClient(create_app(store))
    board = client.get("/api/leaderboard", params={"suite": DEMO_SUITE}).json()
    assert [e["run_id"] for e in board["entries"]] == [v1, v2]
    for entry, run_id in zip(board["entries"], (v1, v2), strict=True):
        passes, n = pass_rate(store, run_id)
        expected = wilson_interval(passes, n)
        assert entry["agent"] == store.get_run(run_id).agent
        assert (entry["passes"], entry["attempts"]) == (passes, n)
        assert abs(entry["success"]["low"] - expected.low) < 1e-12
        calls = [c for r in store.attempts(run_id, with_traces=True) for c in r.trace.tool_calls()]
        assert entry["tool_calls"] == len(calls)
        assert entry["tool_errors"] == sum(not c.success for c in calls)
        assert entry["pass_hat_k"] is None  # one repeat each
    # v2 fails its read on a missing file: its tool success is the lower one.
    assert board["entries"][1]["tool_success"] < board["entries"][0]["tool_success"]

    page = client.get("/leaderboard")  # the suite of the newest run by default
    assert page.status_code == 200
    html = page.text
    agent_v1, agent_v2 = store.get_run(v1).agent, store.get_run(v2).agent
    assert html.index(f'data-agent="{agent_v1}"') < html.index(f'data-agent="{agent_v2}"')
    for run_id in (v1, v2):
        passes, n = pass_rate(store, run_id)
        assert f"{passes / n * 100:.1f}%" in html
        assert f"{passes} of {n} attempts" in html


def test_the_leaderboard_shows_pass_hat_k_when_cases_repeat(store: Store) -> None:
    run_id = run_demo(store, "v2", repeats=2)
    entry = TestClient(create_app(store)).get("/api/leaderboard").json()["entries"][0]
    per_case: dict[str, list[bool]] = defaultdict(list)
    for record in store.attempts(run_id):
        per_case[record.case_id].append(record.verdict == "PASS")
    expected = mean_pass_hat_k([(len(v), sum(v)) for v in per_case.values()], 2)
    assert entry["k"] == 2
    assert abs(entry["pass_hat_k"] - expected) < 1e-12


def test_an_empty_store_says_there_is_nothing_to_rank(store: Store) -> None:
    client = TestClient(create_app(store))
    assert "No run is stored yet" in client.get("/leaderboard").text
    assert "No run of this suite" in client.get("/coverage").text
    assert client.get("/api/leaderboard").json()["entries"] == []


def test_coverage_counts_each_tool_as_the_stored_spans_do(store: Store) -> None:
    run_id = run_demo(store, "v2")
    expected = tool_figures(store, run_id)
    assert {"read_file", "write_file", "list_directory"} <= set(expected)
    client = TestClient(create_app(store))
    cov = client.get("/api/coverage", params={"suite": DEMO_SUITE}).json()
    assert cov["run_id"] == run_id
    got = {t["name"]: t for t in cov["tools"] if t["kind"] == "tool"}
    assert set(got) == set(expected)
    for name, figures in expected.items():
        tool = got[name]
        assert tool["cases"] == len(figures["cases"])  # type: ignore[arg-type]
        assert tool["attempts"] == len(figures["attempts"])  # type: ignore[arg-type]
        assert tool["passed"] == len(figures["passed"])  # type: ignore[arg-type]
        assert (tool["calls"], tool["errors"]) == (figures["calls"], figures["errors"])
    html = client.get("/coverage", params={"run": run_id}).text
    for name, figures in expected.items():
        row = re.search(rf'<tr class="tool-row" data-tool="{name}">(.*?)</tr>', html, re.S)
        assert row is not None
        cells = dict(re.findall(r'<td class="num (cases|attempts|calls)">(\d+)</td>', row[1]))
        assert cells == {
            "cases": str(len(figures["cases"])),  # type: ignore[arg-type]
            "attempts": str(len(figures["attempts"])),  # type: ignore[arg-type]
            "calls": str(figures["calls"]),
        }


TINY_SUITE = """
suite: tiny-coverage
cases:
  - id: list-only
    input: List the files in the workspace
    fixture: {fixture}
    allowed_tools: [list_directory, read_file, delete_file]
    assertions:
      - {{type: tool_called, expected: list_directory}}
  - id: archive
    input: List the files in the workspace
    fixture: {fixture}
    assertions:
      - {{type: tool_params, tool: archive_file, expected: {{path: old}}}}
"""


def test_a_tool_named_by_a_case_but_never_called_is_not_exercised(
    store: Store, write_suite
) -> None:
    fixture = PROJECT / "fixtures" / "three-files"
    suite = write_suite(TINY_SUITE.format(fixture=fixture))
    run_id = run_demo(store, "v1", suite=suite)
    called = set(tool_figures(store, run_id))
    assert "list_directory" in called and "delete_file" not in called
    client = TestClient(create_app(store))
    cov = client.get("/api/coverage", params={"suite": "tiny-coverage"}).json()
    missing = {item["name"]: item["cases"] for item in cov["not_exercised"]}
    assert missing["delete_file"] == ["list-only"]
    assert missing["archive_file"] == ["archive"]
    assert "list_directory" not in missing
    html = client.get("/coverage", params={"suite": "tiny-coverage"}).text
    assert '<tr class="not-exercised" data-tool="delete_file">' in html
    assert '<tr class="not-exercised" data-tool="list_directory">' not in html
    assert 'id="coverage-matrix"' in html


def test_coverage_of_an_unknown_run_is_a_404(store: Store) -> None:
    client = TestClient(create_app(store))
    page = client.get("/coverage", params={"run": "no-such-run"})
    assert page.status_code == 404 and "no-such-run" in page.text
    assert client.get("/api/coverage", params={"run": "no-such-run"}).status_code == 404


SKILL_SUITE = """
suite: skills
cases:
  - {id: refund-1, input: I want a refund, assertions: [{type: contains, value: done}]}
  - {id: refund-2, input: refund my order, assertions: [{type: contains, value: nope}]}
  - {id: chat, input: hello, assertions: [{type: contains, value: done}]}
"""


def test_coverage_lists_the_skills_the_agent_routed_to(store: Store, write_suite) -> None:
    run_id = run_demo(store, f"python:{__file__}:routes_to_skills", suite=write_suite(SKILL_SUITE))
    verdicts = {r.case_id: r.verdict for r in store.attempts(run_id)}
    cov = TestClient(create_app(store)).get("/api/coverage", params={"run": run_id}).json()
    skills = {t["name"]: t for t in cov["tools"] if t["kind"] == "skill"}
    assert set(skills) == {"refunds", "small-talk"}
    refunds = skills["refunds"]
    assert (refunds["cases"], refunds["attempts"]) == (2, 2)
    assert refunds["passed"] == sum(verdicts[c] == "PASS" for c in ("refund-1", "refund-2"))
