"""The judge's own model calls during a run: capped by ``judge.max_tokens``, kept in the
ledger even when they fail, and shown in the attempt's trace as judge ``chat`` spans.

The judge is a FakeOpenAI server that answers as a weak local judge did (Qwen2.5-Coder 0.5B
on llama.cpp under the JSON grammar): the verdict object, then whitespace until something
stops it, at ``max_tokens`` when the request sets one and otherwise never, so the call runs
into its timeout.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from seatrial import execute_suite_async
from seatrial.assertion import AssertionContext, evaluate
from seatrial.case import Suite, load_suite
from seatrial.config import load_config
from seatrial.gateway import Gateway, GatewayConfig
from seatrial.judge import Calibration, Judge, JudgeSettings, load_prompt
from seatrial.report import build_report
from seatrial.run import JudgeRuntime, RunOptions, run_suite_async
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply, Hang
from seatrial.trace import Span, Trace
from seatrial.trace import attrs as A
from tests.gateway.conftest import model_for
from tests.run.simulator_agents import model_script
from tests.run.test_judge_run import SUITE, ModelAgent
from tests.run.test_simulator import AGENT as SIMULATED_AGENT
from tests.run.test_simulator import KEY_ENV as SIMULATOR_KEY
from tests.run.test_simulator import _case as simulator_case
from tests.run.test_simulator import _project as simulator_project

PASS_VERDICT = json.dumps(
    {"verdict": "PASS", "confidence": 0.9, "reason": "the reply says when the money arrives"}
)
RUNAWAY_OUTPUT_TOKENS = 1_700
"""What the weak judge wrote per call before its timeout when nothing capped it."""


def runaway_judge(body: dict[str, Any]) -> FakeReply | Hang:
    """The verdict, then whitespace until ``max_tokens``; without one, no end in sight."""
    cap = body.get("max_tokens")
    if cap is None:
        return Hang()  # still writing when the client gives up
    return FakeReply(
        text=PASS_VERDICT + "\n" * max(cap - 40, 0),
        output_tokens=min(cap, RUNAWAY_OUTPUT_TOKENS),
        finish_reason="length",
    )


@pytest.fixture
def runaway() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(runaway_judge) as fake:
        yield fake


@pytest.fixture
def silent() -> Iterator[FakeOpenAI]:
    """A judge that never answers: every call times out."""
    with FakeOpenAI(Hang()) as fake:
        yield fake


def judge_on(server: FakeOpenAI, store: Store, **settings: Any) -> Judge:
    # Short timeouts: the silent judge must time out fast; no retries, one call per verdict.
    model = model_for(
        server,
        name="judge",
        model="gpt-4o-2024-08-06",
        timeout_s=0.5,
        first_byte_timeout_s=0.5,
        max_retries=0,
    )
    # The judge's gateway writes the ledger of the run's store, as a run's gateway does.
    gateway = Gateway(GatewayConfig(models={"judge": model}), store=store)
    return Judge(gateway, JudgeSettings(model="judge", **settings))


@pytest.fixture
async def capped(runaway: FakeOpenAI, store: Store) -> AsyncIterator[Judge]:
    judge = judge_on(runaway, store)
    yield judge
    await judge.gateway.aclose()


@pytest.fixture
async def timing_out(silent: FakeOpenAI, store: Store) -> AsyncIterator[Judge]:
    judge = judge_on(silent, store)
    yield judge
    await judge.gateway.aclose()


def one_attempt_suite(write_suite) -> Suite:
    return load_suite(write_suite(SUITE.replace("repeats: 2", "repeats: 1")))


async def judged_run(suite: Suite, store: Store, judge: Judge) -> str:
    runtime = JudgeRuntime.open(judge, store)
    outcome = await run_suite_async(suite, ModelAgent(), store, RunOptions(judge=runtime))
    return outcome.run_id


def judge_spans(trace: Trace) -> list[Span]:
    return [s for s in trace.spans if s.attributes.get(A.GATEWAY_PURPOSE) == "judge"]


async def test_every_judge_call_sends_max_tokens_so_a_runaway_judge_stops(
    write_suite, store, capped, runaway
):
    run_id = await judged_run(one_attempt_suite(write_suite), store, capped)

    [request] = runaway.requests
    assert request.body["max_tokens"] == JudgeSettings().max_tokens == 512
    [attempt] = store.attempts(run_id)
    [result] = attempt.assertions
    assert result.verdict == "pass"
    [row] = store.model_calls(run_id)
    assert (row.purpose, row.status, row.output_tokens) == ("judge", "ok", 512)


async def test_judge_max_tokens_is_configurable(write_suite, store, runaway):
    judge = judge_on(runaway, store, max_tokens=200)
    try:
        await judged_run(one_attempt_suite(write_suite), store, judge)
    finally:
        await judge.gateway.aclose()

    assert [r.body["max_tokens"] for r in runaway.requests] == [200]


async def test_a_judge_call_is_a_judge_chat_span_under_the_attempts_root(
    write_suite, store, capped
):
    run_id = await judged_run(one_attempt_suite(write_suite), store, capped)

    [attempt] = store.attempts(run_id, with_traces=True)
    trace = attempt.trace
    assert trace is not None
    [span] = judge_spans(trace)
    root = trace.agent_span()
    assert root is not None
    assert span.name == "chat judge"
    assert span.parent_span_id == root.span_id
    assert span.trace_id == trace.trace_id
    assert span.attributes[A.OPERATION] == A.OP_CHAT
    assert span.attributes[A.REQUEST_MODEL] == "judge"
    assert span.attributes[A.RESPONSE_MODEL] == "gpt-4o-2024-08-06"
    assert span.attributes[A.OUTPUT_TOKENS] == 512
    assert span.attributes["gen_ai.request.max_tokens"] == 512
    # The agent's own figures leave the judge out: one model call, the agent's.
    assert attempt.metrics.model_calls == 1
    assert [c.model for c in trace.model_calls()] == ["qwen-max"]


async def test_a_timed_out_judge_leaves_a_ledger_row_a_failed_span_and_a_warning(
    write_suite, store, timing_out
):
    run_id = await judged_run(one_attempt_suite(write_suite), store, timing_out)

    [row] = store.model_calls(run_id)
    assert (row.purpose, row.model, row.status) == ("judge", "judge", "timeout")
    assert (row.input_tokens, row.output_tokens, row.cost_usd) == (0, 0, 0.0)
    [attempt] = store.attempts(run_id, with_traces=True)
    assert attempt.trace is not None
    [span] = judge_spans(attempt.trace)
    assert span.status == "error"
    assert span.attributes[A.ERROR_TYPE] == "timeout"
    assert span.end_time_unix_nano is not None
    # The case's only check could not be evaluated: a warning, never a pass.
    [result] = attempt.assertions
    assert result.verdict == "not_evaluated"
    assert result.reason.startswith("judge_error: ")
    assert attempt.verdict == "WARNING"
    assert attempt.reason.startswith("llm_judge was not evaluated: judge_error: ")
    summary = build_report(store, run_id).summary
    assert (summary.passed, summary.warnings, summary.pass_rate) == (0, 1, 0.0)


async def test_limits_on_the_agents_model_calls_do_not_count_the_judges_span(
    write_suite, store, capped
):
    run_id = await judged_run(one_attempt_suite(write_suite), store, capped)
    [attempt] = store.attempts(run_id, with_traces=True)
    trace = attempt.trace
    assert trace is not None and len(judge_spans(trace)) == 1
    suite = load_suite(
        write_suite(
            SUITE.replace(
                "    assertions:\n",
                "    assertions:\n      - {type: limits, model_calls: 1}\n",
            ),
            name="limited.yaml",
        )
    )
    [case] = suite.cases

    def limits_verdict(checked: Trace) -> str:
        ctx = AssertionContext(case=case, trace=checked, response=attempt.response)
        [limit] = [r for r in evaluate(case, ctx).results if r.type == "limits"]
        return limit.verdict

    # The stored trace holds the agent's call and the judge's: within a limit of one.
    assert limits_verdict(trace) == "pass"
    # The near miss: the same span as the agent's own call is over the limit.
    agent_call = judge_spans(trace)[0].model_copy(
        update={"attributes": {**judge_spans(trace)[0].attributes, A.GATEWAY_PURPOSE: "agent"}}
    )
    over = trace.model_copy(update={"spans": [*trace.spans, agent_call]})
    assert limits_verdict(over) == "fail"


async def test_the_judges_check_of_a_simulated_user_is_a_judge_span_too(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A calibrated judge checks that the simulated user kept to its goal before the agent is
    # judged: that call, too, is a judge span of the attempt and a judge row of the ledger.
    monkeypatch.setenv(SIMULATOR_KEY, "sk-test-simulator")

    def upstream_script(body: dict[str, Any]) -> FakeReply:
        if body["model"] == "grader-v1":
            return FakeReply(PASS_VERDICT)
        return model_script(body)

    with FakeOpenAI(upstream_script) as upstream:
        suite = simulator_project(tmp_path, upstream, simulator_case("book", "A polite diner"))
        config_file = tmp_path / "seatrial.yaml"
        grader = (
            f"models:\n  grader: {{model: grader-v1, base_url: '{upstream.base_url}', "
            f"api_key_env: {SIMULATOR_KEY}}}\n"
        )
        text = config_file.read_text(encoding="utf-8").replace("models:\n", grader, 1)
        config_file.write_text(text + "judge: {model: grader}\n", encoding="utf-8")
        store.save_calibration(
            Calibration(
                judge_model="grader",
                prompt_hash=load_prompt("judge", "v1").hash,
                prompt_version="v1",
                created_at=time.time(),
                items=150,
                agreement=0.92,
                kappa=0.8,
                base_rate=0.5,
            )
        )
        done = await execute_suite_async(
            suite,
            SIMULATED_AGENT,
            config=load_config(tmp_path),
            store=store,
            write_report_files=False,
        )
    [record] = store.attempts(done.run_id)
    assert record.verdict == "PASS"
    trace = store.attempt_trace(done.run_id, "book", 1)
    [span] = judge_spans(trace)
    root = trace.agent_span()
    assert root is not None and span.parent_span_id == root.span_id
    assert span.attributes[A.REQUEST_MODEL] == "grader"
    assert [r.status for r in store.model_calls(done.run_id) if r.purpose == "judge"] == ["ok"]
