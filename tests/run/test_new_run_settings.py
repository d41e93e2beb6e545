"""A new run's settings composed once (the front door hands them to the runner), and a stored
run's options read back once (resume)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from seatrial import __version__
from seatrial._execute import execute_suite_async
from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.config import load_config
from seatrial.record import RunInfo, RunSettings
from seatrial.run import RunOptions, new_run_settings, run_suite_async, suite_hash
from seatrial.store import Store
from tests.conftest import agent_spec

SUITE = """
suite: basics
gate: {min_pass_rate: 0.5}
rubrics: {礼貌: 回复是否礼貌}
cases:
  - id: hello
    input: hello
    repeats: 2
    assertions: [{type: contains, value: "you said: hello"}]
"""


def test_a_new_runs_settings_hold_its_options_suite_snapshot_and_what_was_chosen(write_suite):
    suite = load_suite(write_suite(SUITE))
    adapter = resolve_agent(agent_spec("echo"))
    options = RunOptions(
        repeats=3,
        concurrency=2,
        timeout_s=None,
        settings={"bench": {"id": "b1"}, "mode": "caller"},
    )
    settings = new_run_settings(suite, adapter, options, recorded={"mode": "front door"})
    assert (settings.repeats, settings.concurrency, settings.timeout_s) == (3, 2, None)
    assert settings.gate == {"min_pass_rate": 0.5} and settings.rubrics == {"礼貌": "回复是否礼貌"}
    assert settings.suite_hash == suite_hash(suite.cases)
    assert settings.snapshot is not None and settings.snapshot.seatrial_version == __version__
    assert settings.snapshot.agent.spec == agent_spec("echo")
    assert settings.snapshot.gateway is None  # no gateway was running
    assert settings.bench is not None and settings.bench.id == "b1"
    assert settings.mode == "front door"  # what the front door chose wins over the caller's


def test_the_runner_stores_the_settings_it_is_handed_unchanged(write_suite, store):
    suite = load_suite(write_suite(SUITE))
    handed = RunSettings.model_validate({"repeats": 1, "concurrency": 1, "plugin": {"n": 1}})

    async def go() -> str:
        adapter = resolve_agent(agent_spec("echo"))
        try:
            outcome = await run_suite_async(
                suite, adapter, store, RunOptions(repeats=1), settings=handed
            )
        finally:
            await adapter.aclose()
        return outcome.run_id

    run_id = asyncio.run(go())
    assert store.get_run(run_id).settings.stored() == handed.stored()
    assert len(store.attempts(run_id)) == 1


def test_a_run_past_the_front_door_stores_the_same_settings_the_front_door_would(
    write_suite, store
):
    suite = load_suite(write_suite(SUITE))
    options = RunOptions(repeats=1, concurrency=1)

    async def go() -> tuple[str, RunSettings]:
        adapter = resolve_agent(agent_spec("echo"))
        try:
            expected = new_run_settings(suite, adapter, options)
            outcome = await run_suite_async(suite, adapter, store, options)
        finally:
            await adapter.aclose()
        return outcome.run_id, expected

    run_id, expected = asyncio.run(go())
    assert store.get_run(run_id).settings.stored() == expected.stored()


def test_a_stored_runs_options_are_its_settings_and_tags():
    info = RunInfo(
        run_id="r",
        suite="s",
        agent="a",
        tags=["nightly"],
        settings={"repeats": 2, "concurrency": 3, "timeout_s": None, "workers": 4},
    )
    options = RunOptions.of_run(info)
    assert (options.repeats, options.concurrency, options.timeout_s, options.workers) == (
        2,
        3,
        None,
        4,
    )
    assert options.tags == ["nightly"] and options.judge is None and options.dispatch is None
    # A run stored before these settings existed reads the run defaults.
    older = RunOptions.of_run(RunInfo(run_id="r", suite="s", agent="a"))
    defaults = RunOptions()
    assert (older.concurrency, older.timeout_s, older.workers) == (
        defaults.concurrency,
        defaults.timeout_s,
        defaults.workers,
    )


def test_a_run_resumed_through_the_front_door_keeps_the_options_it_stored(
    tmp_path: Path, write_suite
):
    (tmp_path / "seatrial.yaml").write_text("run: {repeats: 5}\n", encoding="utf-8")
    config = load_config(tmp_path)
    suite_path = write_suite(SUITE)
    with Store.open(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        adapter = resolve_agent(agent_spec("echo"))
        info = RunInfo(
            run_id="r1",
            suite="basics",
            suite_path=str(suite_path),
            agent=agent_spec("echo"),
            settings={"repeats": 1, "concurrency": 1},
        )
        store.create_run(info, load_suite(suite_path).cases)
        result = asyncio.run(
            execute_suite_async(
                resume="r1",
                agent=adapter,
                config=config,
                store=store,
                options=RunOptions(repeats=4),
                write_report_files=False,
            )
        )
        # The stored repeats (1), not seatrial.yaml's (5) nor this call's (4).
        assert [a.attempt for a in store.attempts(result.run_id)] == [1]
        assert store.get_run("r1").status == "finished"
