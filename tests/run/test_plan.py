"""A case planned once per run (CasePlan), and where a run's attempts run (one rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial._execute import default_options
from seatrial.agent import resolve_agent
from seatrial.case import AssertionSpec, Case, Suite
from seatrial.config import load_config
from seatrial.errors import SuiteError
from seatrial.run import (
    CasePlan,
    can_fork,
    case_hash,
    fixture_hash,
    pinned_here,
    placement,
    run_attempt,
    run_suite_async,
)
from seatrial.store import Store
from tests.conftest import agent_spec

CHECK = [AssertionSpec.model_validate({"type": "contains", "value": "you said"})]


async def test_each_attempt_snapshots_the_case_it_ran_when_a_run_and_case_id_come_back(
    tmp_path: Path,
) -> None:
    """Two attempts of different cases under the same run id and case id (a long-lived
    process: a Celery worker, a library calling run_attempt) each store their own case and
    fixture hashes. A table kept between calls, keyed by (run, case id), gave the second
    attempt the first one's hashes: ``seatrial rerun`` would then compare against a case that
    was not the one run."""
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "notes.txt").write_text("第一版", encoding="utf-8")
    first = Case(id="same", input="hello", fixture=str(fixture), assertions=CHECK)
    adapter = resolve_agent(agent_spec("echo"))
    try:
        before = await run_attempt(adapter, first, 1, "r1", 30)
        (fixture / "notes.txt").write_text("第二版", encoding="utf-8")
        second = first.model_copy(update={"input": "hello again"})
        after = await run_attempt(adapter, second, 1, "r1", 30)
    finally:
        await adapter.aclose()
    assert before.verdict == after.verdict == "PASS"
    assert before.snapshot is not None and after.snapshot is not None
    assert before.snapshot.case_hash == case_hash(first)
    assert after.snapshot.case_hash == case_hash(second) != before.snapshot.case_hash
    assert after.snapshot.fixture_hash == fixture_hash(fixture)
    assert after.snapshot.fixture_hash != before.snapshot.fixture_hash


async def test_the_attempts_of_a_planned_case_use_the_plan_made_for_the_run(
    tmp_path: Path,
) -> None:
    """The plan is made once and handed down: its fixture hash is the one every attempt
    stores, even when the folder changes between attempts of the same run."""
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "data.json").write_text('{"城市": "上海"}', encoding="utf-8")
    planned = CasePlan.of(Case(id="c", input="hello", fixture=str(fixture), assertions=CHECK))
    adapter = resolve_agent(agent_spec("echo"))
    try:
        one = await run_attempt(adapter, planned, 1, "r1", 30)
        (fixture / "data.json").write_text('{"城市": "北京"}', encoding="utf-8")
        two = await run_attempt(adapter, planned, 2, "r1", 30)
    finally:
        await adapter.aclose()
    assert one.snapshot is not None and two.snapshot is not None
    assert one.snapshot.fixture_hash == two.snapshot.fixture_hash == planned.fixture_hash
    assert (one.verdict, two.verdict) == ("PASS", "PASS")


async def test_a_run_whose_case_cannot_be_planned_stores_nothing(tmp_path: Path) -> None:
    """A case built in code with an unknown assertion type stops the run before it is
    stored, naming the case; the case next to it is fine (the near miss)."""
    good = Case(id="good", input="hi", assertions=CHECK)
    bad = Case(id="bad", input="hi", assertions=[AssertionSpec(type="contians")])
    adapter = resolve_agent(agent_spec("echo"))
    with Store.open(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        try:
            with pytest.raises(SuiteError, match="case `bad`, assertion 1"):
                await run_suite_async(Suite(name="s", cases=[good, bad]), adapter, store)
            assert store.list_runs() == []
            outcome = await run_suite_async(Suite(name="s", cases=[good]), adapter, store)
        finally:
            await adapter.aclose()
        assert [r.run_id for r in store.list_runs()] == [outcome.run_id]


def test_the_judge_or_the_gateway_keep_a_run_in_this_process() -> None:
    assert pinned_here(judge=True, gateway=True) == "judge"
    assert pinned_here(judge=False, gateway=True) == "gateway"
    assert pinned_here(judge=False, gateway=False) is None
    for judge, gateway in ((True, False), (False, True)):
        assert placement(workers=4, attempts=10, dispatch=False, judge=judge, gateway=gateway) == (
            "here"
        )


def test_a_dispatch_takes_every_attempt_and_one_attempt_or_worker_stays_here() -> None:
    assert placement(workers=4, attempts=10, dispatch=True, judge=True, gateway=True) == (
        "dispatch"
    )
    assert placement(workers=1, attempts=10, dispatch=False, judge=False, gateway=False) == "here"
    assert placement(workers=4, attempts=1, dispatch=False, judge=False, gateway=False) == "here"
    forked = placement(workers=2, attempts=2, dispatch=False, judge=False, gateway=False)
    assert forked == ("workers" if can_fork() else "here")


def test_run_options_from_the_command_line_win_over_seatrial_yaml(tmp_path: Path) -> None:
    """The front door makes a run's options in one place: seatrial.yaml's ``run:`` keys,
    each replaced by the option given, and kept when it is not."""
    (tmp_path / "seatrial.yaml").write_text(
        "run:\n  repeats: 3\n  concurrency: 5\n  timeout_s: 12\n  workers: 2\n", encoding="utf-8"
    )
    config = load_config(tmp_path)
    kept = default_options(config)
    assert (kept.repeats, kept.concurrency, kept.timeout_s, kept.workers) == (3, 5, 12, 2)
    given = default_options(
        config, repeats=1, concurrency=9, timeout_s=4, workers=1, tags=["夜间"], run_id="r-1"
    )
    assert (given.repeats, given.concurrency, given.timeout_s, given.workers) == (1, 9, 4, 1)
    assert (given.tags, given.run_id) == (["夜间"], "r-1")
