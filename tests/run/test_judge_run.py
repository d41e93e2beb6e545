"""A run with an LLM judge: the gate decides whether its FAIL fails, review items are stored,
the run's settings say which judge judged and whether it was calibrated.

The judge is scripted on a FakeOpenAI server and called through a real Gateway.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from seatrial.agent import AgentOutput, AttemptContext
from seatrial.case import Suite, load_suite
from seatrial.gateway import Gateway, GatewayConfig
from seatrial.judge import Calibration, Judge, JudgeSettings, load_prompt
from seatrial.run import JudgeRuntime, RunOptions, run_suite_async
from seatrial.store import Store
from seatrial.testing import FakeOpenAI
from seatrial.trace import attrs as A
from tests.conftest import agent_spec
from tests.gateway.conftest import model_for

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
REPLY = "已为您办理订单 A123 的退款。"

SUITE = """
suite: refunds
rubrics:
  退款: A refund reply names the order and when the money arrives.
cases:
  - id: refund
    category: 退款
    input: 我的订单 A123 想退款
    repeats: 2
    assertions:
      - {type: llm_judge, criteria: The reply says when the money arrives.}
"""


class ModelAgent:
    """An in-process agent that answers after one model call (a ``chat`` span) to ``model``."""

    name = "refund-bot"

    def __init__(self, model: str = "qwen-max") -> None:
        self.spec = f"test:model-agent:{model}"
        self.model = model

    async def check(self) -> None:
        """Nothing to check: the agent lives in this process."""

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        attributes = {A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: self.model}
        with ctx.recorder.span(f"chat {self.model}", attributes):
            pass
        return AgentOutput(responses=[REPLY])

    async def aclose(self) -> None:
        """Nothing to close."""


def fail_answer() -> str:
    return json.dumps(
        {
            "verdict": "FAIL",
            "confidence": 0.9,
            "failure_type": "semantic_mismatch",
            "reason": "the reply does not say when the money arrives",
        }
    )


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fail_answer()) as fake:
        yield fake


@pytest.fixture
async def judge(server: FakeOpenAI) -> AsyncIterator[Judge]:
    config = GatewayConfig(
        models={"judge": model_for(server, name="judge", model="gpt-4o-2024-08-06")}
    )
    gateway = Gateway(config)
    yield Judge(gateway, JudgeSettings(model="judge"))
    await gateway.aclose()


def suite_from(write_suite, text: str = SUITE) -> Suite:
    return load_suite(write_suite(text))


async def run_with(suite: Suite, store: Store, judge: Judge, agent: ModelAgent) -> str:
    runtime = JudgeRuntime.open(judge, store)
    outcome = await run_suite_async(suite, agent, store, RunOptions(judge=runtime))
    return outcome.run_id


def calibrate(store: Store, judge: Judge, agreement: float, items: int = 150) -> None:
    store.save_calibration(
        Calibration(
            judge_model=judge.model,
            prompt_hash=judge.prompt_hash,
            prompt_version=judge.prompt_version,
            created_at=time.time(),
            items=items,
            agreement=agreement,
            kappa=0.8,
            base_rate=0.5,
        )
    )


async def test_an_uncalibrated_judges_fail_is_stored_as_warning_with_review_items(
    write_suite, store, judge
):
    run_id = await run_with(suite_from(write_suite), store, judge, ModelAgent())

    attempts = store.attempts(run_id)
    assert [a.verdict for a in attempts] == ["WARNING", "WARNING"]
    assert all("is not calibrated" in a.reason for a in attempts)
    assert all("seatrial judge calibrate" in a.assertions[0].reason for a in attempts)
    items = store.review_items(run_id=run_id)
    assert sorted((i.case_id, i.attempt, i.why) for i in items) == [
        ("refund", 1, "warning"),
        ("refund", 2, "warning"),
    ]
    assert {(i.judge_model, i.judge_verdict, i.output) for i in items} == {("judge", "FAIL", REPLY)}
    recorded = store.get_run(run_id).settings.judge
    assert recorded is not None
    assert recorded.model == "judge"
    assert recorded.prompt_hash == judge.prompt_hash
    assert recorded.calibrated is False
    assert recorded.agreement is None


async def test_a_calibrated_judges_fail_fails_the_attempts(write_suite, store, judge, server):
    calibrate(store, judge, agreement=0.92)

    run_id = await run_with(suite_from(write_suite), store, judge, ModelAgent())

    attempts = store.attempts(run_id)
    assert [a.verdict for a in attempts] == ["FAIL", "FAIL"]
    assert {a.failure_type for a in attempts} == {"semantic_mismatch"}
    assert store.review_items(run_id=run_id) == []
    recorded = store.get_run(run_id).settings.judge
    assert recorded is not None
    assert (recorded.calibrated, recorded.agreement) == (True, 0.92)
    # The suite's rubric for the case's category reached the judge.
    assert "names the order and when the money arrives" in json.dumps(
        server.requests[0].body, ensure_ascii=False
    )


async def test_a_calibration_under_the_bar_keeps_the_judge_advisory(write_suite, store, judge):
    calibrate(store, judge, agreement=0.80)

    run_id = await run_with(suite_from(write_suite), store, judge, ModelAgent())

    assert {a.verdict for a in store.attempts(run_id)} == {"WARNING"}
    recorded = store.get_run(run_id).settings.judge
    assert recorded is not None and recorded.agreement == 0.80


async def test_no_judge_call_is_spent_on_attempts_that_failed_a_hard_constraint(
    write_suite, store, judge, server
):
    suite = suite_from(
        write_suite,
        SUITE.replace(
            "    assertions:\n",
            "    assertions:\n      - {type: tool_called, expected: refund_order}\n",
        ),
    )

    run_id = await run_with(suite, store, judge, ModelAgent())

    attempts = store.attempts(run_id)
    assert {(a.verdict, a.failure_type) for a in attempts} == {("FAIL", "tool_not_called")}
    assert len(server.requests) == 0


async def test_a_judge_of_the_agents_model_family_is_refused_and_the_report_says_so(
    write_suite, store, judge, server
):
    run_id = await run_with(suite_from(write_suite), store, judge, ModelAgent("gpt-4o"))

    for attempt in store.attempts(run_id):
        [result] = attempt.assertions
        assert result.verdict == "not_evaluated"
        assert result.reason.startswith("judge refused: the judge judge (gpt-4o-2024-08-06)")
        assert "judge.allow_same_model" in result.reason
    assert len(server.requests) == 0


def seatrial_run_judged(
    tmp_path: Path, *extra: str, suite: str = SUITE
) -> tuple[subprocess.CompletedProcess[str], int]:
    """``seatrial run --judge grader`` on a one-attempt suite, the judge on a FakeOpenAI."""
    (tmp_path / "suite.yaml").write_text(suite.replace("repeats: 2", "repeats: 1"), "utf-8")
    with FakeOpenAI(fail_answer()) as upstream:
        (tmp_path / "seatrial.yaml").write_text(
            "models:\n"
            "  grader:\n"
            "    model: gpt-4o-2024-08-06\n"
            f"    base_url: {upstream.base_url}\n"
            "    api_key_env: SEATRIAL_TEST_JUDGE_KEY\n",
            encoding="utf-8",
        )
        done = subprocess.run(
            [SEATRIAL, "run", "suite.yaml", "--agent", agent_spec("echo"), "--judge", "grader"]
            + list(extra),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "200", "SEATRIAL_TEST_JUDGE_KEY": "sk-judge"},
        )
        return done, len(upstream.requests)


def project_store(tmp_path: Path) -> Store:
    (tmp_path / ".seatrial").mkdir(exist_ok=True)
    return Store.open(f"sqlite:///{tmp_path / '.seatrial' / 'seatrial.db'}")


def test_seatrial_run_judge_builds_its_judge_from_seatrial_yaml(tmp_path: Path) -> None:
    done, calls = seatrial_run_judged(tmp_path, "--workers", "2")

    assert calls == 1
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "judge: judge grader prompt v1" in done.stdout
    assert "is not calibrated: no calibration yet" in done.stdout
    assert "--workers 2 is ignored" in done.stderr
    with project_store(tmp_path) as store:
        [attempt] = store.attempts(store.resolve_run_id("latest"))
        [item] = store.review_items()
    assert attempt.verdict == "WARNING"
    assert item.why == "warning" and item.judge_model == "grader"


def test_the_uncalibrated_judge_notice_is_printed_once_when_l3_assertions_run(
    tmp_path: Path,
) -> None:
    done, calls = seatrial_run_judged(tmp_path)

    assert calls == 1
    # Each WARNING attempt's own reason says why (it is stored with it); the run's lines on
    # its judge say it once: at the start, not again in the summary.
    about_judge = [line for line in done.stdout.splitlines() if line.startswith("judge:")]
    assert len(about_judge) == 2, done.stdout
    notice, summary = about_judge
    assert "is not calibrated: no calibration yet" in notice
    assert "seatrial judge calibrate --judge grader" in notice
    digest = load_prompt("judge", "v1").hash[:12]
    assert (
        summary == f"judge: grader (prompt v1, {digest}): advisory, its FAIL verdicts are WARNINGs"
    )


def test_a_suite_without_l3_assertions_says_nothing_of_the_judge(tmp_path: Path) -> None:
    plain = SUITE.replace(
        "{type: llm_judge, criteria: The reply says when the money arrives.}",
        "{type: contains, value: A123}",
    )
    done, calls = seatrial_run_judged(tmp_path, suite=plain)

    assert done.returncode == 0, done.stdout + done.stderr
    assert calls == 0
    said = done.stdout + done.stderr
    assert "calibrated" not in said and "judge" not in said, said


def test_seatrial_run_raises_the_alarm_when_agreement_fell_below_the_bar(tmp_path: Path) -> None:
    prompt_hash = load_prompt("judge", "v1").hash
    with project_store(tmp_path) as store:
        for created_at, agreement in ((1.0, 0.91), (2.0, 0.78)):
            store.save_calibration(
                Calibration(
                    judge_model="grader",
                    prompt_hash=prompt_hash,
                    created_at=created_at,
                    items=200,
                    agreement=agreement,
                    kappa=None,
                    base_rate=0.5,
                )
            )

    done, _ = seatrial_run_judged(tmp_path)

    assert "ALARM" in done.stderr and "fell below the bar" in done.stderr
    assert "91.0%" in done.stderr and "78.0%" in done.stderr
    with project_store(tmp_path) as store:
        recorded = store.get_run(store.resolve_run_id("latest")).settings.judge
    assert recorded is not None
    assert (recorded.calibrated, recorded.agreement) == (False, 0.78)
