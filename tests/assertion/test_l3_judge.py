"""L3 with an LLM judge: scripted on a FakeOpenAI server, called through a real Gateway.

The judge's FAIL fails an attempt only when the judge is calibrated; an uncalibrated FAIL, a
WARNING or an unconfident answer gives WARNING and a review item; L3 is never spent on an
attempt that already failed a hard L1/L2 constraint.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from seatrial.assertion import (
    AssertionContext,
    AssertionParams,
    Check,
    assertion,
    evaluate,
)
from seatrial.assertion._evaluate import NEEDS_ASYNC
from seatrial.assertion._evaluate_async import evaluate_async
from seatrial.case import AssertionSpec, Case
from seatrial.gateway import Gateway, GatewayConfig
from seatrial.i18n import english, render
from seatrial.judge import Calibration, Judge, JudgeSettings, judge_trust
from seatrial.registry import _assertions as _table
from seatrial.run import JudgeRuntime
from seatrial.testing import FakeOpenAI
from tests.assertion._traces import TraceBuilder
from tests.gateway.conftest import model_for

REPLY = "已为您办理订单 A123 的退款，款项 3 个工作日内退回。"
CRITERIA = "The agent refunds order A123 and says when the money arrives."


def answer(label: str, confidence: float = 0.9, **extra: Any) -> str:
    return json.dumps(
        {"verdict": label, "confidence": confidence, "reason": f"judged {label}", **extra}
    )


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def gateway(server: FakeOpenAI) -> AsyncIterator[Gateway]:
    models = {
        "judge": model_for(server, name="judge", model="gpt-4o-2024-08-06"),
        "agent": model_for(server, name="agent", model="qwen-max-2025-01-25"),
    }
    opened = Gateway(GatewayConfig(models=models))
    yield opened
    await opened.aclose()


def calibration(agreement: float, items: int, created_at: float | None = None) -> Calibration:
    return Calibration(
        judge_model="judge",
        prompt_hash="",  # replaced per judge below
        created_at=created_at or time.time(),
        items=items,
        agreement=agreement,
        kappa=None,
        base_rate=0.5,
    )


def runtime(
    gateway: Gateway,
    history: list[Calibration] | None = None,
    rubrics: dict[str, str] | None = None,
    **settings: Any,
) -> JudgeRuntime:
    judge = Judge(gateway, JudgeSettings(model="judge", **settings))
    ours = [c.model_copy(update={"prompt_hash": judge.prompt_hash}) for c in history or []]
    trust = judge_trust(judge.model, judge.prompt_version, judge.prompt_hash, ours, judge.settings)
    return JudgeRuntime(judge, trust, rubrics)


def case(*specs: dict[str, Any], category: str = "退款", threshold: float | None = None) -> Case:
    return Case(
        id="refund",
        category=category,
        turns=[{"content": "我的订单 A123 想退款"}],
        assertions=[AssertionSpec(**spec) for spec in specs],
        threshold=threshold,
    )


def judge_spec(**params: Any) -> dict[str, Any]:
    return {"type": "llm_judge", "criteria": CRITERIA, **params}


async def judged(
    the_case: Case, run: JudgeRuntime | None, refunded: bool = True, agent_model: str = ""
) -> Any:
    builder = TraceBuilder()
    if refunded:
        builder.tool("refund_order", {"order_id": "A123"}, {"status": "refunded"})
    if agent_model:
        builder.chat(agent_model)
    trace = builder.trace()
    ctx = AssertionContext(case=the_case, trace=trace, response=REPLY, responses=[REPLY])
    if run is not None:
        ctx.judge = run.for_attempt("run-1", the_case.id, 1, trace)
    return await evaluate_async(the_case, ctx)


async def test_l3_is_never_called_after_a_hard_l1_failure(server, gateway):
    server.script = answer("PASS")
    the_case = case({"type": "tool_called", "expected": "cancel_order"}, judge_spec())

    evaluation = await judged(the_case, runtime(gateway))

    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "tool_not_called"
    assert evaluation.results[-1].verdict == "not_evaluated"
    assert evaluation.results[-1].reason == "skipped: a hard constraint failed"
    assert server.requests == []  # no judge call was spent


async def test_the_judge_sees_the_turns_the_tools_called_and_the_categorys_rubric(server, gateway):
    server.script = answer("PASS")
    run = runtime(gateway, rubrics={"退款": "A refund must name the order and the delay."})

    evaluation = await judged(case(judge_spec()), run)

    assert evaluation.verdict == "PASS"
    assert evaluation.review_items == []
    prompt = json.dumps(server.requests[0].body["messages"], ensure_ascii=False)
    for shown in ("我的订单 A123 想退款", "refund_order", REPLY, CRITERIA, "name the order"):
        assert shown in prompt
    assert "judged PASS" in evaluation.results[0].reason


async def test_a_calibrated_judges_fail_fails_the_attempt(server, gateway):
    server.script = answer("FAIL", 0.9, failure_type="hallucination")
    run = runtime(gateway, [calibration(0.9, 200)])

    evaluation = await judged(case(judge_spec()), run, refunded=False)

    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "hallucination"
    assert evaluation.results[0].verdict == "fail"
    assert evaluation.review_items == []


@pytest.mark.parametrize(
    ("history", "why"),
    [
        ([], "no calibration yet"),
        ([calibration(0.95, 40)], "40 labelled items"),
        ([calibration(0.70, 300)], "70.0% agreement"),
    ],
)
async def test_an_uncalibrated_judges_fail_is_a_warning_that_says_why(
    server, gateway, history, why
):
    server.script = answer("FAIL", 0.9, failure_type="hallucination")

    evaluation = await judged(case(judge_spec()), runtime(gateway, history), refunded=False)

    assert evaluation.verdict == "WARNING"
    assert evaluation.failure_type is None
    result = evaluation.results[0]
    assert result.verdict == "not_evaluated"
    assert "advisory FAIL" in result.reason
    assert "is not calibrated" in result.reason and why in result.reason
    assert "seatrial judge calibrate" in evaluation.reason
    [item] = evaluation.review_items
    assert (item.assertion_id, item.why, item.judge_verdict) == ("llm_judge", "warning", "FAIL")
    assert item.output == REPLY and item.input == "我的订单 A123 想退款"


@pytest.mark.parametrize(
    ("script", "why"),
    [(answer("WARNING", 0.9), "warning"), (answer("PASS", 0.4), "low_confidence")],
)
async def test_an_unsure_judge_gives_warning_and_a_review_item(server, gateway, script, why):
    server.script = script

    evaluation = await judged(case(judge_spec()), runtime(gateway, [calibration(0.9, 200)]))

    assert evaluation.verdict == "WARNING"
    assert [item.why for item in evaluation.review_items] == [why]
    assert evaluation.review_items[0].category == "退款"


async def test_with_a_threshold_the_rubric_scores_decide(server, gateway):
    scores = {"task_completion": 0.5, "accuracy": 0.5}
    server.script = answer("PASS", 0.9, dimension_scores=scores)
    run = runtime(gateway, [calibration(0.9, 200)])

    evaluation = await judged(case(judge_spec(threshold=0.8)), run)

    assert evaluation.verdict == "FAIL"
    assert evaluation.score == 0.5
    assert "score 0.50, threshold 0.8" in evaluation.reason


async def test_a_judge_that_never_answers_in_json_leaves_the_assertion_not_evaluated(
    server, gateway
):
    server.script = "I think it is fine."

    evaluation = await judged(
        case({**judge_spec(), "must_pass": True}), runtime(gateway, max_retries=1)
    )

    assert evaluation.verdict == "WARNING"
    assert evaluation.results[0].verdict == "not_evaluated"
    assert evaluation.results[0].reason.startswith("judge_error:")


async def test_the_judge_refuses_to_grade_its_own_model(server, gateway):
    server.script = answer("PASS")

    evaluation = await judged(case(judge_spec()), runtime(gateway), agent_model="gpt-4o")

    result = evaluation.results[0]
    assert result.verdict == "not_evaluated"
    assert result.reason.startswith("judge refused:") and "allow_same_model" in result.reason
    assert server.requests == []
    allowed = await judged(
        case(judge_spec()), runtime(gateway, allow_same_model=True), agent_model="gpt-4o"
    )
    assert allowed.verdict == "PASS"


async def test_another_model_family_is_not_refused(server, gateway):
    server.script = answer("PASS")

    evaluation = await judged(case(judge_spec()), runtime(gateway), agent_model="agent")

    assert evaluation.verdict == "PASS"


async def test_factuality_scores_the_share_of_supported_claims(server, gateway):
    claims = [
        {"claim": "the refund is for A123", "status": "supported", "evidence": "A123"},
        {"claim": "the money arrives in 3 days", "status": "contradicted", "evidence": "7"},
    ]
    server.script = json.dumps({"claims": claims})
    spec = {"type": "factuality", "reference": "A123 refunded; money in 7 days"}

    gated = await judged(case(spec), runtime(gateway, [calibration(0.9, 200)]))
    advisory = await judged(case(spec), runtime(gateway))

    assert gated.verdict == "FAIL"
    assert gated.failure_type == "hallucination"
    assert gated.score == 0.5
    assert "50% of the reply's 2 claims" in gated.reason
    assert "the money arrives in 3 days (contradicted)" in gated.reason
    assert advisory.verdict == "WARNING"
    assert [item.why for item in advisory.review_items] == ["warning"]


async def test_without_a_judge_l3_is_not_evaluated_and_nothing_is_called(server):
    evaluation = await judged(case(judge_spec()), None)

    assert evaluation.results[0].verdict == "not_evaluated"
    assert "no LLM judge is configured" in evaluation.results[0].reason
    assert server.requests == []


class _Echo(AssertionParams):
    text: str
    """Text the reply must contain."""


@pytest.fixture
def async_plugin(monkeypatch):
    """Register (for this test only) a plugin type whose check is ``async def``."""
    monkeypatch.setattr(_table, "_TYPES", dict(_table._TYPES))
    monkeypatch.setattr(_table, "_ALIASES", dict(_table._ALIASES))

    @assertion("test_async_echo", level="L3", params=_Echo, failure_type="semantic_mismatch")
    async def echo(params: _Echo, ctx: AssertionContext) -> Check:
        return Check.passed(params.text) if params.text in ctx.response else Check.failed("no")

    return echo


@pytest.mark.usefixtures("async_plugin")
async def test_an_async_plugin_check_is_awaited_by_evaluate_async():
    the_case = case({"type": "test_async_echo", "text": "A123"})
    evaluation = await judged(the_case, None)
    assert evaluation.verdict == "PASS"
    assert evaluation.results[0].reason == "A123"


@pytest.mark.usefixtures("async_plugin")
def test_the_synchronous_evaluate_records_an_async_check_as_not_evaluated():
    the_case = case({"type": "test_async_echo", "text": "A123", "must_pass": True})
    trace = TraceBuilder().trace()
    evaluation = evaluate(the_case, AssertionContext(case=the_case, trace=trace, response=REPLY))
    assert evaluation.verdict == "WARNING"
    assert evaluation.results[0].reason == english(NEEDS_ASYNC)


def test_a_calibration_below_the_bar_after_one_above_it_raises_the_alarm():
    settings = JudgeSettings(model="judge")
    history = [calibration(0.80, 200, 2.0), calibration(0.90, 200, 1.0)]
    gate = judge_trust("judge", "v1", "ab" * 32, history, settings)
    assert not gate.calibrated
    assert gate.alarm is not None and "fell below the bar" in gate.alarm
    assert "90.0%" in gate.alarm and "80.0%" in gate.alarm
    steady = judge_trust("judge", "v1", "ab" * 32, history[1:], settings)
    assert steady.calibrated and steady.alarm is None


async def test_a_judge_pass_that_a_rule_contradicts_goes_to_review_as_a_disagreement(
    server, gateway
):
    server.script = answer("PASS")
    rule = {"type": "contains", "value": "退款单号", "must_pass": False}
    the_case = case(rule, judge_spec(), threshold=0.5)

    evaluation = await judged(the_case, runtime(gateway, [calibration(0.9, 200)]))

    [item] = evaluation.review_items
    assert (item.assertion_id, item.why, item.judge_verdict) == (
        "llm_judge",
        "disagreement",
        "PASS",
    )
    assert "contains" in item.judge_reason  # names the rule that disagreed
    assert item.output == REPLY


async def test_a_judge_that_agrees_with_the_rules_queues_nothing(server, gateway):
    server.script = answer("PASS")
    rule = {"type": "contains", "value": "A123", "must_pass": False}

    evaluation = await judged(case(rule, judge_spec()), runtime(gateway, [calibration(0.9, 200)]))

    assert evaluation.verdict == "PASS"
    assert evaluation.review_items == []


def _zh(result: Any) -> str:
    return render(result.message, language="zh_CN")


async def test_a_calibrated_fail_reads_in_chinese_with_the_judges_reason_as_it_wrote_it(
    server, gateway
):
    server.script = json.dumps(
        {"verdict": "FAIL", "confidence": 0.9, "reason": "没有说明到账时间", "failure_type": "x"}
    )
    evaluation = await judged(case(judge_spec()), runtime(gateway, [calibration(0.9, 200)]))
    result = evaluation.results[0]
    assert result.reason.startswith("judge judge (prompt ")
    assert result.reason.endswith(") said FAIL with confidence 0.90: 没有说明到账时间")
    assert _zh(result).startswith("评审模型 judge（提示词 ")
    assert _zh(result).endswith("）判定 FAIL，置信度 0.90：没有说明到账时间")
    assert result.span_id is None


async def test_a_score_under_the_threshold_reads_in_chinese(server, gateway):
    server.script = answer("PASS", 0.9, dimension_scores={"accuracy": 0.5})
    run = runtime(gateway, [calibration(0.9, 200)])
    scored = (await judged(case(judge_spec(threshold=0.8)), run)).results[0]
    assert _zh(scored).endswith("：judged PASS（得分 0.50，阈值 0.8）")


async def test_an_unsure_judge_reads_in_chinese(server, gateway):
    server.script = answer("PASS", 0.4)
    run = runtime(gateway, [calibration(0.9, 200)])
    unsure = (await judged(case(judge_spec()), run)).results[0]
    assert unsure.reason.endswith(
        ": judged PASS; under the confidence floor 0.6, a person decides (review queue)"
    )
    assert _zh(unsure).endswith("：judged PASS；低于置信度下限 0.6，交由人工判定（复核队列）")


async def test_an_advisory_fail_reads_in_chinese(server, gateway):
    server.script = answer("FAIL", 0.9)
    result = (await judged(case(judge_spec()), runtime(gateway), refunded=False)).results[0]
    assert result.reason.startswith("advisory FAIL: judge judge ")
    assert _zh(result).startswith("仅供参考的 FAIL：评审模型 judge（")
    assert "：judged FAIL；" in _zh(result)


async def test_unsupported_claims_read_in_chinese_as_the_judge_wrote_them(server, gateway):
    claims = [
        {"claim": "the refund is for A123", "status": "supported"},
        {"claim": "钱 3 天内到账", "status": "contradicted"},
    ]
    server.script = json.dumps({"claims": claims})
    spec = {"type": "factuality", "reference": "A123 refunded; money in 7 days"}
    run = runtime(gateway, [calibration(0.9, 200)])
    result = (await judged(case(spec), run)).results[0]
    assert result.reason == (
        "judge judge: 50% of the reply's 2 claims are supported by the reference (threshold "
        "100%); not supported: 钱 3 天内到账 (contradicted)"
    )
    assert _zh(result) == (
        "评审模型 judge：回复的 2 条论断中有 50% 得到参考资料支持（阈值 100%）；"
        "未得到支持的论断：钱 3 天内到账（contradicted）"
    )


async def test_one_supported_claim_is_said_in_the_singular(server, gateway):
    server.script = json.dumps({"claims": [{"claim": "A123", "status": "supported"}]})
    spec = {"type": "factuality", "reference": "A123 refunded; money in 7 days"}
    one = (await judged(case(spec), runtime(gateway, [calibration(0.9, 200)]))).results[0]
    assert one.reason == (
        "judge judge: 100% of the reply's 1 claim is supported by the reference (threshold 100%)"
    )


async def test_a_judge_error_reads_in_chinese_with_the_error_as_raised(server, gateway):
    server.script = "I think it is fine."
    evaluation = await judged(case(judge_spec()), runtime(gateway, max_retries=1))
    result = evaluation.results[0]
    error = result.reason.removeprefix("judge_error: ")
    assert error != result.reason
    assert _zh(result) == f"judge_error：{error}"
