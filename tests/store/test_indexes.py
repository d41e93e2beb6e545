"""The dashboard's and compare's queries are served by indexes on a seeded PostgreSQL store.

The store holds 200 runs of 50 attempts (four spans each), analysed. Each named query is run
for real; every statement it sends is captured and explained with the same parameters.

A test store is small next to a real one, where a page of runs is a sliver of the attempts,
so the planner may rightly scan a whole small table. Two checks follow from that:

- queries of one run must use indexes as the planner chooses on its own (0.5% of the rows);
- every query must still find an index with sequential scans priced out
  (``enable_seqscan = off``): a plan that scans anyway shows no index can serve it, which is
  what a missing index means at volume.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event

from seatrial.record import RunInfo
from seatrial.store import (
    RunQuery,
    Store,
    attempt_figures,
    attempt_groups,
    case_definitions,
    latest_runs,
    newest_run_of_suite,
    newest_run_per_agent,
    previous_run_id,
    run_counts,
    run_heads,
    run_totals,
    runs_matching,
    skill_uses,
    tool_call_counts,
    tool_uses,
    wall_time_p95,
)
from tests.store.conftest import pg_url
from tests.store.seeding import Seeded, seed, template_attempt

pytestmark = pytest.mark.postgres

BIG_TABLES = {"runs", "run_tags", "run_cases", "attempts", "spans", "model_calls"}


def run_header(**fields: Any) -> RunInfo:
    values: dict[str, Any] = {"run_id": uuid.uuid4().hex, "suite": "s", "agent": "a"}
    values.update(fields)
    return RunInfo(**values)


def tags_of(index: int) -> dict[str, Any]:
    tags = ["nightly"] if index % 3 == 0 else []
    tags += ["replay"] if index % 11 == 0 else []
    tags += ["release-1.4"] if index == 150 else []
    return {"tags": tags}


@pytest.fixture(scope="module")
def seeded(pg_user: str, pg_schemas: Callable[[], str]) -> Iterator[tuple[Store, Seeded]]:
    """A PostgreSQL store of 200 runs x 50 attempts x 4 spans, analysed."""
    with Store.open(pg_url(pg_user, pg_schemas())) as store:
        filled = seed(store, run_header, template_attempt(), runs=200, cases=50, run_fields=tags_of)
        with store.engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE")
        yield store, filled


def plans(store: Store, call: Callable[[], object], *, seqscan: bool) -> list[dict[str, Any]]:
    """The plan of every SELECT ``call`` sends, explained with its own parameters."""
    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            sent.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        call()
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)
    assert sent, "the query sent no SELECT"
    found = []
    with store.engine.connect() as connection:
        if not seqscan:
            connection.exec_driver_sql("SET enable_seqscan = off")
        for statement, parameters in sent:
            explained = connection.exec_driver_sql(
                f"EXPLAIN (FORMAT JSON) {statement}", parameters
            ).scalar_one()
            found.append(explained[0]["Plan"])
    return found


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def scanned(found: list[dict[str, Any]]) -> set[str]:
    """The big tables some plan reads whole."""
    return {
        node["Relation Name"]
        for plan in found
        for node in nodes(plan)
        if node["Node Type"] == "Seq Scan" and node["Relation Name"] in BIG_TABLES
    }


def indexes(found: list[dict[str, Any]]) -> set[str]:
    return {node["Index Name"] for plan in found for node in nodes(plan) if "Index Name" in node}


def queries(store: Store, filled: Seeded) -> dict[str, Callable[[], object]]:
    """The store's reads behind the dashboard, reports and compare, as the callers ask."""
    ids = [run.run_id for run in filled.runs]
    page, one, run = ids[-10:], ids[100], filled.runs[100]
    return {
        "runs list": lambda: runs_matching(store, RunQuery(), 50),
        "runs of a suite": lambda: runs_matching(store, RunQuery(suite="airline"), 50),
        "runs of an agent": lambda: runs_matching(store, RunQuery(agent="v2"), 50),
        "runs with a tag": lambda: runs_matching(store, RunQuery(tag="nightly"), 50),
        "trend": lambda: run_heads(store, RunQuery(suite="airline"), 30),
        "totals": lambda: run_totals(store, page),
        "p95": lambda: wall_time_p95(store, page),
        "gate figures": lambda: attempt_figures(store, page),
        "case definitions": lambda: case_definitions(store, page),
        "previous run": lambda: previous_run_id(store, run),
        "leaderboard": lambda: newest_run_per_agent(store, "airline", skip_tag="replay"),
        "newest of suite": lambda: newest_run_of_suite(store, "airline", skip_tag="replay"),
        "tool counts": lambda: tool_call_counts(store, page),
        "tool uses": lambda: tool_uses(store, one),
        "skill uses": lambda: skill_uses(store, one),
        "runs of a suite and agent": lambda: store.list_runs(
            limit=50, suite=run.suite, agent=run.agent
        ),
        "run by tag": lambda: store.list_runs(limit=1, tag="release-1.4"),
        "run with traces": lambda: store.attempts(one, with_traces=True),
        "one trace": lambda: store.attempt_trace(one, "case-010", 1),
        "verdict counts": lambda: store.verdict_counts(page),
        "case verdict counts": lambda: store.case_verdict_counts(page),
        "resume bookkeeping": lambda: store.finished_attempts(one),
        "spend of a run": lambda: store.spend(one),
        "model calls of a run": lambda: store.model_calls(one),
        "metrics: latest runs": lambda: latest_runs(store, skip_tag="replay"),
        "metrics: their attempts": lambda: attempt_groups(store, page, [0.5, 1.0, 10.0]),
        "metrics: run counts": lambda: run_counts(store, skip_tag="replay"),
    }


def test_every_dashboard_and_compare_query_has_an_index(seeded: tuple[Store, Seeded]) -> None:
    store, filled = seeded
    unserved = {
        name: sorted(tables)
        for name, call in queries(store, filled).items()
        if (tables := scanned(plans(store, call, seqscan=False)))
    }
    assert unserved == {}


@pytest.mark.parametrize("name", ["run with traces", "one trace", "tool uses", "skill uses"])
def test_reading_one_run_uses_indexes_as_the_planner_chooses(
    seeded: tuple[Store, Seeded], name: str
) -> None:
    store, filled = seeded
    found = plans(store, queries(store, filled)[name], seqscan=True)
    assert scanned(found) == set()


@pytest.mark.parametrize("name", ["runs of a suite and agent", "leaderboard"])
def test_runs_of_one_suite_and_agent_read_the_suite_agent_index(
    seeded: tuple[Store, Seeded], name: str
) -> None:
    store, filled = seeded
    found = plans(store, queries(store, filled)[name], seqscan=False)
    assert "ix_runs_suite_agent_started_at" in indexes(found)
