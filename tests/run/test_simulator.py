"""Simulated users (``user_simulator``): a model plays the user through the gateway, its
turns and cost are its own, and its misconduct is the simulator's failure, not the agent's."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from seatrial import execute_suite_async
from seatrial.config import load_config
from seatrial.i18n import use_language
from seatrial.report import print_summary, to_json, to_markdown
from seatrial.store import Store
from seatrial.testing import FakeOpenAI
from seatrial.trace import Trace
from seatrial.trace import attrs as A
from seatrial.web._timeline import build_timeline
from tests.run.simulator_agents import (
    AGENT_MODEL,
    PHONE,
    SIMULATOR_MODEL,
    model_agent_script,
    model_script,
)

AGENT = f"python:{Path(__file__).parent / 'simulator_agents.py'}:booking_desk"
SEATRIAL = str(Path(sys.executable).parent / "seatrial")
KEY_ENV = "SEATRIAL_TEST_SIMULATOR_KEY"
AGENT_CALL_USD = (100 * 1.0 + 10 * 2.0) / 1e6
SIMULATOR_CALL_USD = (1000 * 10.0 + 20 * 20.0) / 1e6


def _case(case_id: str, persona: str, repeats: int = 1, priority: str = "P1", **more: str) -> str:
    extra = "".join(f"      {key}: {value}\n" for key, value in more.items())
    return (
        f"  - id: {case_id}\n"
        f"    repeats: {repeats}\n"
        f"    priority: {priority}\n"
        "    user_simulator:\n"
        f"      persona: {persona}\n"
        "      goal: Book a table for two on Friday under the name Li Wei\n"
        "      facts: {name: Li Wei, date: Friday}\n"
        f"      hidden: {{phone: '{PHONE}'}}\n"
        f"{extra}"
        "    assertions:\n"
        "      - {type: contains, value: Booked}\n"
        # Read from the messages the simulated user sent (its case has no written turns).
        "      - {type: business_rule, rule: confirm_before, tool: book_table,\n"
        "         fields: {date: friday, name: li wei}}\n"
    )


def _project(tmp_path: Path, upstream: FakeOpenAI, cases: str, simulator: bool = True) -> Path:
    prices = {"desk": (AGENT_MODEL, 1.0, 2.0), "user": (SIMULATOR_MODEL, 10.0, 20.0)}
    lines = ["models:"]
    for name, (model, cost_in, cost_out) in prices.items():
        lines.append(
            f"  {name}: {{model: {model}, base_url: '{upstream.base_url}', "
            f"api_key_env: {KEY_ENV}, price: {{input_per_mtok: {cost_in}, "
            f"output_per_mtok: {cost_out}}}}}"
        )
    if simulator:
        lines.append("simulator: {model: user}")
    (tmp_path / "seatrial.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: booking\ncases:\n" + cases, encoding="utf-8")
    return suite


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-simulator")


def _simulator_spans(trace: Trace) -> list[object]:
    return [s for s in trace.spans if s.attributes.get(A.GATEWAY_PURPOSE) == "simulator"]


def _events(trace: Trace, name: str) -> list[dict[str, object]]:
    return [dict(event.attributes) for _, event in trace.events(name)]


async def test_a_simulated_user_books_a_table_and_ends_with_the_stop_token(
    tmp_path: Path, store: Store
) -> None:
    with FakeOpenAI(model_script) as upstream:
        suite = _project(tmp_path, upstream, _case("book", "A polite diner"))
        # No gateway=True: a case with a simulated user starts the gateway itself.
        done = await execute_suite_async(
            suite, AGENT, config=load_config(tmp_path), store=store, write_report_files=False
        )
        simulator_requests = [r for r in upstream.requests if r.body["model"] == SIMULATOR_MODEL]
    [record] = store.attempts(done.run_id)
    assert (record.verdict, record.failure_type) == ("PASS", None)
    assert record.responses == [
        "Which date would you like?",
        "What name is the booking under?",
        "Booked: a table on Friday for Li Wei.",
    ]
    assert record.final_state == {"date": "Friday", "name": "Li Wei", "booked": True}
    trace = store.attempt_trace(done.run_id, "book", 1)
    assert [
        (e[A.SIMULATED_TURN_INDEX], e[A.SIMULATED_TURN_MESSAGE])
        for e in _events(trace, A.SIMULATED_TURN)
    ] == [(0, "Hi, I'd like to book a table for two."), (1, "Friday, please."), (2, "Li Wei.")]
    # The stop token is taken out, and its closing words are not sent to the agent.
    assert _events(trace, A.SIMULATOR_STOP) == [
        {A.SIMULATOR_STOP_REASON: "stop_token", A.SIMULATOR_STOP_MESSAGE: "Great, thanks!"}
    ]
    # Four simulator calls in the trace, none of them counted as the agent's.
    assert len(_simulator_spans(trace)) == 4
    assert [c.model for c in trace.model_calls()] == [AGENT_MODEL] * 3
    assert record.metrics.model_calls == 3
    assert (record.metrics.input_tokens, record.metrics.output_tokens) == (300, 30)
    assert record.metrics.cost_usd == pytest.approx(3 * AGENT_CALL_USD)
    # The simulator's cost is a line of its own in the run's spend.
    assert done.report.spend_usd == {
        "agent": pytest.approx(3 * AGENT_CALL_USD),
        "simulator": pytest.approx(4 * SIMULATOR_CALL_USD),
    }
    [row] = [r for r in store.model_calls(done.run_id) if r.purpose == "simulator"][:1]
    assert (row.case_id, row.attempt) == ("book", 1)
    # The simulator was told who it is, what it may and may not say, and how to stop.
    system = simulator_requests[0].body["messages"][0]["content"]
    for text in ("A polite diner", "Li Wei", "Friday", PHONE, "never say", "###STOP###"):
        assert text in system
    summary = done.report.simulator
    assert summary is not None
    assert (summary.attempts, summary.simulator_failures, summary.agent_failures) == (1, 0, 0)
    # The dashboard's timeline names the simulator's calls as its own.
    labels = [row.label for row in build_timeline(trace).rows if row.kind == "chat"]
    assert labels.count("simulator: chat user") == 4
    assert labels.count("chat desk") == 3


async def test_a_simulator_that_leaks_a_hidden_fact_fails_itself_not_the_agent(
    tmp_path: Path, store: Store
) -> None:
    cases = _case("honest", "A polite diner", repeats=2) + _case(
        "leaky", "A blabbermouth diner", repeats=2
    )
    with FakeOpenAI(model_script) as upstream:
        suite = _project(tmp_path, upstream, cases)
        done = await execute_suite_async(
            suite, AGENT, config=load_config(tmp_path), store=store, write_report_files=False
        )
    records = {(r.case_id, r.attempt): r for r in store.attempts(done.run_id)}
    # The well-behaved simulator goes on to its normal end: three turns, the table booked.
    for attempt in (1, 2):
        honest = records[("honest", attempt)]
        assert honest.verdict == "PASS" and len(honest.responses) == 3
        assert honest.metrics.tool_calls == 1
    for attempt in (1, 2):
        leaky = records[("leaky", attempt)]
        assert (leaky.verdict, leaky.failure_type) == ("ERROR", "simulator")
        assert leaky.reason == (
            "simulator: leaked the hidden fact `phone` in message 3 (not sent: the "
            "conversation stopped there)"
        )
        # The conversation stopped at the leaking turn: the agent answered the two messages
        # before it and was never handed the third, so it booked nothing.
        assert len(leaky.responses) == 2 and leaky.metrics.tool_calls == 0
        trace = store.attempt_trace(done.run_id, "leaky", attempt)
        assert [e[A.SIMULATED_TURN_INDEX] for e in _events(trace, A.SIMULATED_TURN)] == [0, 1]
        assert _events(trace, A.SIMULATOR_STOP) == [
            {
                A.SIMULATOR_STOP_REASON: "leak",
                A.SIMULATOR_STOP_MESSAGE: f"Li Wei, my phone is {PHONE}.",
            }
        ]
    report = done.report
    assert report.categories[0].failures_by_type == {"simulator": 2}
    summary = report.simulator
    assert summary is not None
    assert (summary.attempts, summary.simulator_failures, summary.agent_failures) == (4, 2, 0)
    assert summary.error_rate == 0.5 and summary.agent_pass_rate == 1.0
    line = (
        "simulated users: 4 attempts, simulator failures 2 (simulator error rate 50.0% "
        f"[{summary.error_interval[0]:.1%}, {summary.error_interval[1]:.1%}]), agent "
        "failures 0; agent pass rate 100.0% over the 2 attempts it held"
    )
    assert line in to_markdown(report)
    assert to_json(report)["simulator"]["simulator_failures"] == 2
    out = io.StringIO()
    print_summary(report, Console(file=out, width=300))
    assert line in out.getvalue()
    with use_language("zh_CN"):
        assert summary.line() == (
            "模拟用户：4 次执行，模拟器失误 2 次（模拟器出错率 50.0% "
            f"[{summary.error_interval[0]:.1%}, {summary.error_interval[1]:.1%}]），"
            "智能体失败 0 次；模拟用户守住规则的 2 次执行中，智能体通过率 100.0%"
        )


async def test_a_simulator_that_leaks_early_spends_no_agent_turn_after_it(
    tmp_path: Path, store: Store
) -> None:
    # An oversharer gives its phone in message 2 and would then go on until max_turns.
    case = _case("overshare", "An oversharer", max_turns="8")
    with FakeOpenAI(model_script) as upstream:
        suite = _project(tmp_path, upstream, case)
        done = await execute_suite_async(
            suite, AGENT, config=load_config(tmp_path), store=store, write_report_files=False
        )
        desk_calls = [r for r in upstream.requests if r.body["model"] == AGENT_MODEL]
        simulator_calls = [r for r in upstream.requests if r.body["model"] == SIMULATOR_MODEL]
    [record] = store.attempts(done.run_id)
    assert (record.verdict, record.failure_type) == ("ERROR", "simulator")
    assert "leaked the hidden fact `phone` in message 2" in record.reason
    # One agent turn (the first message), none after the leak; two simulator calls.
    assert record.responses == ["Which date would you like?"]
    assert (len(desk_calls), len(simulator_calls)) == (1, 2)


async def test_a_simulated_user_talks_to_a_model_agent_through_the_same_gateway(
    tmp_path: Path, store: Store
) -> None:
    with FakeOpenAI(model_agent_script) as upstream:
        suite = _project(tmp_path, upstream, _case("book", "A polite diner"))
        done = await execute_suite_async(
            suite, "model:desk", config=load_config(tmp_path), store=store, write_report_files=False
        )
        desk_requests = [r.body for r in upstream.requests if r.body["model"] == AGENT_MODEL]
    [record] = store.attempts(done.run_id)
    assert (record.verdict, record.response) == ("PASS", "Booked: a table on Friday for Li Wei.")
    # The model agent saw the simulated user's messages as its user turns.
    assert [m["content"] for m in desk_requests[-1]["messages"] if m["role"] == "user"] == [
        "Hi, I'd like to book a table for two.",
        "Friday, please.",
        "Li Wei.",
    ]
    trace = store.attempt_trace(done.run_id, "book", 1)
    assert len(_events(trace, A.SIMULATED_TURN)) == 3
    assert (record.metrics.model_calls, len(_simulator_spans(trace))) == (3, 4)
    assert set(done.report.spend_usd) == {"agent", "simulator"}


async def test_max_turns_ends_a_conversation_the_simulator_does_not_end(
    tmp_path: Path, store: Store
) -> None:
    # The opening is written; the simulator never hears a booking so never stops by itself.
    case = _case("capped", "A polite diner", opening="'Hello, is this the desk?'", max_turns="2")
    with FakeOpenAI(model_script) as upstream:
        suite = _project(tmp_path, upstream, case)
        done = await execute_suite_async(
            suite, AGENT, config=load_config(tmp_path), store=store, write_report_files=False
        )
    [record] = store.attempts(done.run_id)
    assert len(record.responses) == 2  # two user messages, then max_turns
    assert (record.verdict, record.failure_type) == ("FAIL", "format")  # the agent's own FAIL
    trace = store.attempt_trace(done.run_id, "capped", 1)
    # The written opening is not marked simulated: only the second message is.
    assert [e[A.SIMULATED_TURN_INDEX] for e in _events(trace, A.SIMULATED_TURN)] == [1]
    assert _events(trace, A.SIMULATOR_STOP) == [
        {A.SIMULATOR_STOP_REASON: "max_turns", A.SIMULATOR_STOP_MESSAGE: ""}
    ]
    assert len(_simulator_spans(trace)) == 1


def _seatrial_run(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, "run", "suite.yaml", "--agent", AGENT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.slow
def test_seatrial_run_without_a_simulator_model_exits_2_before_anything_runs(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(model_script) as upstream:
        _project(tmp_path, upstream, _case("book", "A polite diner"), simulator=False)
        done = _seatrial_run(tmp_path)
        (tmp_path / "seatrial.yaml").write_text(
            "models: {}\nsimulator: {model: nowhere}\n", encoding="utf-8"
        )
        unknown = _seatrial_run(tmp_path)
        calls = len(upstream.requests)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "case 'book' has a user_simulator but no model plays it" in done.stderr
    assert "simulator: {model: NAME}" in done.stderr
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    assert "simulator.model 'nowhere' is not among models:" in unknown.stderr
    assert calls == 0 and not (tmp_path / ".seatrial").exists()


@pytest.mark.slow
def test_seatrial_run_prints_the_simulators_cost_and_failures_apart(tmp_path: Path) -> None:
    cases = _case("honest", "A polite diner") + _case(
        "leaky", "A blabbermouth diner", priority="P0"
    )
    with FakeOpenAI(model_script) as upstream:
        _project(tmp_path, upstream, cases)
        done = _seatrial_run(tmp_path)
    # A simulator failure is an ERROR: never a pass, so a P0 case it spoiled fails the gate.
    assert done.returncode == 1, done.stdout + done.stderr
    assert "leaky ERROR (simulator)" in done.stdout
    # Seven simulator calls: four for honest, three for leaky (whose third message leaked
    # and ended the conversation).
    assert f"simulator ${7 * SIMULATOR_CALL_USD:.4f}" in done.stdout
    assert "2 attempts, simulator failures 1 (simulator error rate 50.0%" in done.stdout
    assert "agent failures 0; agent pass rate 100.0% over the 1 attempt it held" in done.stdout
    assert "sk-test-simulator" not in done.stdout + done.stderr
    report = json.loads(
        subprocess.run(
            [SEATRIAL, "report", "latest", "--format", "json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )
    assert report["spend_usd"]["simulator"] == pytest.approx(7 * SIMULATOR_CALL_USD)
    assert report["simulator"]["error_rate"] == 0.5
