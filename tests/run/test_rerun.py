"""The Time Machine: a stored attempt re-run from its snapshot, diffed against itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from seatrial import rerun_attempt_async
from seatrial._execute import execute_suite_async
from seatrial.agent import resolve_agent
from seatrial.case import Suite, load_suite
from seatrial.config import load_config
from seatrial.demo._demo import PROJECT, SUITE
from seatrial.errors import AgentSpecError, InputError
from seatrial.record import RunInfo
from seatrial.run import RunOptions, run_suite_async
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply
from tests.conftest import agent_spec
from tests.notify.bots import Bot
from tests.run.replay_project import KEY_ENV, order_model, record_run, write_project
from tests.run.test_judge_run import SUITE as JUDGED_SUITE
from tests.run.test_judge_run import fail_answer

CASE = "where-is-my-order"
CASSETTE = "seatrial.gateway.cassette"
REQUEST_HASH = "seatrial.gateway.request_hash"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-replay")


async def test_a_recorded_attempt_reruns_from_its_cassette_with_the_model_gone(
    tmp_path: Path, store: Store
) -> None:
    async with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        run_id = await record_run(tmp_path, store)
    asked = len(upstream.requests)  # the upstream is stopped: a call would fail
    result = await rerun_attempt_async(store, f"{run_id}:{CASE}", config=load_config(tmp_path))
    assert result.reproduced and result.exit_code == 0
    assert result.mode == "cassette" and result.changes == [] and result.mismatch is None
    assert (result.stored.verdict, result.replayed.verdict) == ("PASS", "PASS")
    assert len(result.diff.rows) == 4  # model call, order_status, model call, reply
    assert len(upstream.requests) == asked == 2
    info = store.get_run(result.run_id)
    assert info.tags == ["replay"]
    assert info.settings.replay_of.model_dump() == {"run_id": run_id, "case_id": CASE, "attempt": 1}
    assert info.settings.mode == "cassette"
    assert result.replayed.trace is not None and result.stored.trace is not None
    old_calls = [c.span.attributes for c in result.stored.trace.model_calls()]
    new_calls = [c.span.attributes for c in result.replayed.trace.model_calls()]
    assert [a[CASSETTE] for a in new_calls] == ["replay", "replay"]
    assert [a[REQUEST_HASH] for a in new_calls] == [a[REQUEST_HASH] for a in old_calls]
    # A rerun of the rerun is served from the original recording too.
    again = await rerun_attempt_async(
        store, f"{result.run_id}:{CASE}", config=load_config(tmp_path)
    )
    assert again.reproduced and again.mode == "cassette"
    assert again.cassette == result.cassette and len(upstream.requests) == 2


async def test_a_live_rerun_asks_the_models_again_and_records_no_cassette(
    tmp_path: Path, store: Store
) -> None:
    async with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        run_id = await record_run(tmp_path, store)
        result = await rerun_attempt_async(
            store, f"{run_id}:{CASE}", config=load_config(tmp_path), live=True
        )
        asked = len(upstream.requests)
    assert asked == 4  # two recorded, two live
    assert result.mode == "live" and result.live
    assert result.replayed.verdict == "PASS" and result.exit_code == 0
    assert result.reproduced  # the same agent against the same scripted model
    cassettes = sorted(p.name for p in (tmp_path / ".seatrial" / "cassettes").iterdir())
    assert cassettes == [f"{run_id}.jsonl"]


async def test_a_rerun_whose_cassette_is_gone_is_refused_saying_use_live(
    tmp_path: Path, store: Store
) -> None:
    async with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        run_id = await record_run(tmp_path, store)
    (tmp_path / ".seatrial" / "cassettes" / f"{run_id}.jsonl").unlink()
    with pytest.raises(InputError, match="--live") as raised:
        await rerun_attempt_async(store, f"{run_id}:{CASE}", config=load_config(tmp_path))
    assert raised.value.exit_code == 2


async def _run_demo_case(store: Store, suite: Suite, case_id: str, base_dir: Path) -> str:
    adapter = resolve_agent("python:seatrial.demo.agents:v1", base_dir=base_dir)
    one = suite.model_copy(update={"cases": [suite.case(case_id)]})
    try:
        await adapter.check()
        outcome = await run_suite_async(one, adapter, store, RunOptions(repeats=1))
    finally:
        await adapter.aclose()
    return outcome.run_id


async def test_a_scripted_agent_without_a_gateway_is_run_again_and_reproduces(
    store: Store,
) -> None:
    run_id = await _run_demo_case(store, load_suite(SUITE), "summarize-readme", PROJECT)
    result = await rerun_attempt_async(
        store, f"{run_id}:summarize-readme", config=load_config(PROJECT)
    )
    assert result.reproduced and result.exit_code == 0
    assert result.mode == "live" and result.cassette is None
    assert result.changes == []
    assert any("no gateway" in note for note in result.notes)
    assert store.get_run(result.run_id).settings.mode == "live"


async def test_a_changed_fixture_is_reported_and_the_step_it_changed_is_found(
    tmp_path: Path, store: Store
) -> None:
    shutil.copytree(PROJECT / "fixtures", tmp_path / "fixtures")
    shutil.copytree(PROJECT / "suites", tmp_path / "suites")
    run_id = await _run_demo_case(
        store, load_suite(tmp_path / "suites" / "workspace.yaml"), "count-lines", tmp_path
    )
    notes = tmp_path / "fixtures" / "three-files" / "notes.txt"
    notes.write_text(notes.read_text(encoding="utf-8") + "a third line\n", encoding="utf-8")
    result = await rerun_attempt_async(store, f"{run_id}:count-lines", config=load_config(tmp_path))
    assert [c.what for c in result.changes] == ["fixture"]
    assert result.changes[0].then == result.stored.snapshot.fixture_hash  # type: ignore[union-attr]
    assert not result.reproduced and result.exit_code == 1
    first = result.diff.first
    assert first is not None and first.kind == "different_tool_result"
    assert first.a is not None and first.a.detail["name"] == "read_file"


async def test_a_changed_case_in_the_suite_file_is_reported_and_the_stored_case_rerun(
    tmp_path: Path, store: Store
) -> None:
    shutil.copytree(PROJECT / "fixtures", tmp_path / "fixtures")
    shutil.copytree(PROJECT / "suites", tmp_path / "suites")
    suite_file = tmp_path / "suites" / "workspace.yaml"
    run_id = await _run_demo_case(store, load_suite(suite_file), "summarize-readme", tmp_path)
    text = suite_file.read_text(encoding="utf-8")
    suite_file.write_text(
        text.replace("{type: icontains, value: seatrial demo}", "{type: no_loop}")
    )
    result = await rerun_attempt_async(
        store, f"{run_id}:summarize-readme", config=load_config(tmp_path)
    )
    assert [c.what for c in result.changes] == [f"case summarize-readme in {suite_file}"]
    assert result.reproduced  # the case as it was stored ran again
    assert [a.type for a in result.replayed.assertions] == [
        a.type for a in result.stored.assertions
    ]


async def _copy_without_snapshots(store: Store, run_id: str, agent: str) -> str:
    """The run as a Seatrial before snapshots would have stored it (and under ``agent``)."""
    info = store.get_run(run_id)
    settings = {k: v for k, v in info.settings.stored().items() if k != "snapshot"}
    old = RunInfo(run_id="old-run", suite=info.suite, agent=agent, settings=settings)
    store.create_run(old, store.run_cases(run_id))
    records = store.attempts(run_id, with_traces=True)
    store.save_attempts(
        [r.model_copy(update={"run_id": "old-run", "snapshot": None}) for r in records]
    )
    return "old-run"


async def test_an_attempt_stored_before_snapshots_reruns_with_a_note(store: Store) -> None:
    run_id = await _run_demo_case(store, load_suite(SUITE), "summarize-readme", PROJECT)
    old = await _copy_without_snapshots(store, run_id, "python:seatrial.demo.agents:v1")
    result = await rerun_attempt_async(
        store, f"{old}:summarize-readme", config=load_config(PROJECT)
    )
    assert result.reproduced
    assert any("before Seatrial kept snapshots" in note for note in result.notes)


async def test_an_agent_that_cannot_be_resolved_is_bad_input(store: Store) -> None:
    run_id = await _run_demo_case(store, load_suite(SUITE), "summarize-readme", PROJECT)
    old = await _copy_without_snapshots(store, run_id, "tau-bench-import")
    with pytest.raises(AgentSpecError, match="unknown agent `tau-bench-import`"):
        await rerun_attempt_async(store, f"{old}:summarize-readme", config=load_config(PROJECT))
    assert store.list_runs(tag="replay") == []  # refused before anything ran


async def test_a_model_pinned_anew_in_seatrial_yaml_is_reported_and_the_cassette_still_serves(
    tmp_path: Path, store: Store
) -> None:
    async with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        run_id = await record_run(tmp_path, store)
    config_file = tmp_path / "seatrial.yaml"
    config_file.write_text(
        config_file.read_text(encoding="utf-8").replace("model: main-v1", "model: main-v2"),
        encoding="utf-8",
    )
    result = await rerun_attempt_async(store, f"{run_id}:{CASE}", config=load_config(tmp_path))
    found = {change.what: change for change in result.changes}
    assert set(found) == {"gateway configuration", "model main"}
    assert found["gateway configuration"].then != found["gateway configuration"].now
    assert found["model main"].line() == "model main: main-v1 -> main-v2"
    assert result.reproduced and len(upstream.requests) == 2


MODEL_AGENT_SUITE = """
suite: orders
cases:
  - id: where-is-my-order
    input: Where is order A1?
    assertions:
      - {type: contains, value: shipped}
"""


async def _record_model_agent_run(root: Path, upstream: FakeOpenAI) -> str:
    """A run of the named model agent `courier` (seatrial.yaml `agents:`, model `main`),
    through the front door, its answers recorded in a cassette."""
    (root / "suite.yaml").write_text(MODEL_AGENT_SUITE, encoding="utf-8")
    (root / "seatrial.yaml").write_text(
        "models:\n"
        "  main:\n"
        "    model: main-v1\n"
        f"    base_url: {upstream.base_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        "agents:\n"
        "  courier:\n"
        "    spec: model:main\n"
        "    system_prompt: You answer questions about orders.\n"
        "gateway:\n"
        "  cassette: {mode: record}\n",
        encoding="utf-8",
    )
    done = await execute_suite_async(
        root / "suite.yaml",
        "courier",
        config=load_config(root),
        db=f"sqlite:///{root / 'seatrial.db'}",
        write_report_files=False,
    )
    return done.run_id


async def test_a_rerun_of_a_named_model_agent_lists_no_change_when_nothing_changed(
    tmp_path: Path,
) -> None:
    async with FakeOpenAI(FakeReply("Order A1 is shipped.", model="main-v1")) as upstream:
        run_id = await _record_model_agent_run(tmp_path, upstream)
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        stored = store.attempts(run_id)[0]
        result = await rerun_attempt_async(store, f"{run_id}:{CASE}", config=load_config(tmp_path))
    assert stored.snapshot is not None and stored.snapshot.agent is not None
    assert stored.snapshot.agent["model"] == "main-v1"
    # Before, the rerun resolved `model:main` without the configured models and listed
    # "agent model: main-v1 -> main" on every rerun.
    assert result.changes == []
    assert result.reproduced and result.exit_code == 0


async def test_a_rerun_of_a_named_model_agent_lists_a_model_really_configured_anew(
    tmp_path: Path,
) -> None:
    async with FakeOpenAI(FakeReply("Order A1 is shipped.", model="main-v1")) as upstream:
        run_id = await _record_model_agent_run(tmp_path, upstream)
    config_file = tmp_path / "seatrial.yaml"
    config_file.write_text(
        config_file.read_text(encoding="utf-8").replace("model: main-v1", "model: main-v2"),
        encoding="utf-8",
    )
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        result = await rerun_attempt_async(store, f"{run_id}:{CASE}", config=load_config(tmp_path))
    lines = [change.line() for change in result.changes]
    assert "agent model: main-v1 -> main-v2" in lines
    assert "model main: main-v1 -> main-v2" in lines


async def test_a_rerun_is_judged_by_the_projects_judge_as_the_run_was_and_writes_no_reports(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEATRIAL_TEST_JUDGE_KEY", "sk-judge")
    (tmp_path / "suite.yaml").write_text(JUDGED_SUITE.replace("repeats: 2", "repeats: 1"), "utf-8")
    with FakeOpenAI(fail_answer()) as upstream:
        (tmp_path / "seatrial.yaml").write_text(
            "models:\n"
            "  grader:\n"
            "    model: gpt-4o-2024-08-06\n"
            f"    base_url: {upstream.base_url}\n"
            "    api_key_env: SEATRIAL_TEST_JUDGE_KEY\n"
            "judge:\n"
            "  model: grader\n",
            encoding="utf-8",
        )
        config = load_config(tmp_path)
        run = await execute_suite_async(
            tmp_path / "suite.yaml",
            agent_spec("echo"),
            config=config,
            store=store,
            write_report_files=False,
        )
        result = await rerun_attempt_async(store, f"{run.run_id}:refund", config=config)
    # Through the front door, as `seatrial run`: the judge of seatrial.yaml judges the rerun
    # (it once left its L3 assertions "not evaluated", as if no judge were configured).
    [judged] = result.replayed.assertions
    assert (
        "judge grader" in judged.reason and "does not say when the money arrives" in judged.reason
    )
    assert [r.reason for r in result.replayed.assertions] == [
        r.reason for r in result.stored.assertions
    ]
    assert result.replayed.verdict == result.stored.verdict and result.reproduced
    assert not (tmp_path / ".seatrial" / "reports").exists()


async def test_a_rerun_of_a_failed_attempt_sends_no_alert_where_its_run_sent_one(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    with (project / "seatrial.yaml").open("a", encoding="utf-8") as config_file:
        config_file.write(
            "alerts:\n"
            "  backoff_s: 0\n"
            "  channels:\n"
            "    team:\n"
            "      kind: slack\n"
            "      url: ${SLACK_WEBHOOK}\n"
        )
    bot = Bot("slack").start()
    try:
        monkeypatch.setenv("SLACK_WEBHOOK", bot.url)
        config = load_config(project)
        run = await execute_suite_async(
            project / "suites" / "workspace.yaml",
            "v2",
            config=config,
            store=store,
            write_report_files=False,
        )
        assert not run.passed and len(bot.accepted) == 1  # gate_failed
        result = await rerun_attempt_async(
            store, f"{run.run_id}:read-missing-config", config=config
        )
    finally:
        bot.stop()
    # The rerun fails as its attempt did, and the gate of a one-case rerun fails with it: the
    # team heard about the run once; looking at one attempt again is no news.
    assert result.replayed.verdict == "FAIL" and result.reproduced
    assert len(bot.requests) == 1
