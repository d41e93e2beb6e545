"""The runner: every case and repeat, failures as data, fixtures per attempt, resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.run import RunOptions, resume_async, run_suite_async
from seatrial.store import Store
from tests.conftest import agent_spec


def _run(suite_path: Path, function: str, store: Store, **options: object) -> str:
    async def go() -> str:
        adapter = resolve_agent(agent_spec(function))
        try:
            outcome = await run_suite_async(
                load_suite(suite_path), adapter, store, RunOptions(**options)
            )
        finally:
            await adapter.aclose()
        return outcome.run_id

    return asyncio.run(go())


SUITE = """
suite: basics
cases:
  - id: hello
    input: hello
    assertions: [{type: contains, value: "you said: hello"}]
  - id: twice
    turns: [one, two]
    repeats: 3
    assertions: [{type: contains, value: two}]
"""


def test_every_case_and_repeat_is_stored_with_its_verdict(write_suite, store):
    run_id = _run(write_suite(SUITE), "echo", store)
    attempts = store.attempts(run_id)
    assert sorted((a.case_id, a.attempt) for a in attempts) == [
        ("hello", 1),
        ("twice", 1),
        ("twice", 2),
        ("twice", 3),
    ]
    assert {a.verdict for a in attempts} == {"PASS"}
    assert store.get_run(run_id).status == "finished"


def test_repeats_option_overrides_every_case(write_suite, store):
    run_id = _run(write_suite(SUITE), "async_echo", store, repeats=2)
    assert len(store.attempts(run_id)) == 4


def test_an_agent_that_raises_gives_error_and_the_run_goes_on(write_suite, store):
    suite = write_suite("""
suite: crashes
cases:
  - {id: bad, input: boom, assertions: [{type: contains, value: fine}]}
  - {id: good, input: calm, assertions: [{type: contains, value: fine}]}
""")
    run_id = _run(suite, "crash_on_boom", store)
    by_case = {a.case_id: a for a in store.attempts(run_id)}
    assert by_case["bad"].verdict == "ERROR"
    assert by_case["bad"].failure_type == "agent_error"
    assert "boom happened" in (by_case["bad"].error or "")
    assert by_case["good"].verdict == "PASS"


def test_an_attempt_past_its_timeout_is_error_timeout(write_suite, store):
    suite = write_suite("suite: slow\ncases: [{id: s, input: hi}]\n")
    run_id = _run(suite, "slow", store, timeout_s=0.2)
    (attempt,) = store.attempts(run_id)
    assert attempt.verdict == "ERROR"
    assert attempt.failure_type == "timeout"
    assert "0.2 s" in attempt.reason


def test_each_attempt_gets_a_fresh_user_and_session(write_suite, store):
    suite = write_suite("""
suite: users
cases:
  - {id: fresh, input: hi, repeats: 3, context: {user_id: alice}}
  - {id: fixed, input: hi, repeats: 2, fresh_user: false, context: {user_id: bob}}
""")
    run_id = _run(suite, "remember_user", store)
    fresh = [a for a in store.attempts(run_id) if a.case_id == "fresh"]
    fixed = [a for a in store.attempts(run_id) if a.case_id == "fixed"]
    assert len({a.user_id for a in fresh}) == 3
    assert all(a.user_id.startswith("alice_") for a in fresh)
    assert {a.user_id for a in fixed} == {"bob"}
    assert len({a.session_id for a in fresh + fixed}) == 5


def test_fixture_is_copied_fresh_for_every_attempt(write_suite, store, tmp_path):
    fixture = tmp_path / "fx"
    fixture.mkdir()
    (fixture / "data.txt").write_text("payload", encoding="utf-8")
    suite = write_suite("suite: ws\ncases: [{id: w, input: hi, fixture: fx, repeats: 3}]\n")
    run_id = _run(suite, "workspace_path", store)
    replies = [a.response for a in store.attempts(run_id)]
    assert all(r.endswith("seen=False") for r in replies)
    assert len({r.split()[0] for r in replies}) == 3
    assert not (fixture / "marker.txt").exists()


class CancelAfter:
    """A progress sink that interrupts the run (like Ctrl-C) after ``n`` attempts."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.task: asyncio.Task[object] | None = None

    def start(self, total: int, done: int) -> None:
        self.task = asyncio.current_task()

    def advance(self, record: object) -> None:
        self.n -= 1
        if self.n == 0 and self.task is not None:
            self.task.cancel()

    def stop(self) -> None:
        pass


def test_an_interrupted_run_is_resumed_without_redoing_stored_attempts(
    write_suite, store, tmp_path, monkeypatch
):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("SEATRIAL_TEST_LOG", str(log))
    suite = load_suite(
        write_suite(
            "suite: r\ncases: [{id: a, input: x, repeats: 4}, {id: b, input: y, repeats: 3}]\n"
        )
    )

    async def interrupted() -> str:
        adapter = resolve_agent(agent_spec("logged"))
        progress = CancelAfter(3)
        try:
            await run_suite_async(suite, adapter, store, RunOptions(concurrency=1), progress)
        except asyncio.CancelledError:
            pass
        finally:
            await adapter.aclose()
        (run,) = store.list_runs()
        return run.run_id

    run_id = asyncio.run(interrupted())
    assert store.get_run(run_id).status == "interrupted"
    stored = store.finished_attempts(run_id)
    assert len(stored) == 3
    first_calls = log.read_text(encoding="utf-8").splitlines()

    async def resume() -> None:
        adapter = resolve_agent(agent_spec("logged"))
        try:
            await resume_async(run_id, adapter, store)
        finally:
            await adapter.aclose()

    asyncio.run(resume())
    second_calls = log.read_text(encoding="utf-8").splitlines()[len(first_calls) :]
    redone = {(c.split()[0], int(c.split()[1])) for c in second_calls}
    assert redone.isdisjoint(stored)
    assert len(store.attempts(run_id)) == 7
    assert store.get_run(run_id).status == "finished"
