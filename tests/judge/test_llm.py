"""The LLM judge, scripted on a FakeOpenAI server and called through a real Gateway."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from seatrial.config import load_config
from seatrial.errors import ConfigError, GatewayError
from seatrial.gateway import Gateway, GatewayConfig
from seatrial.judge import (
    Judge,
    JudgeError,
    JudgeInput,
    JudgeSettings,
    load_prompt,
    parse_json_object,
)
from seatrial.testing import FakeOpenAI, FakeReply
from tests.conftest import bundled_data
from tests.gateway.conftest import model_for

LLMBAR = bundled_data("llmbar")

REFUND = JudgeInput(
    turns=["我的订单 A123 想退款", "对，就是昨天买的那个耳机"],
    reply="已为您办理订单 A123 的退款，款项将在 3 个工作日内退回。",
    trace_summary='refund_order({"order_id": "A123"}) -> {"status": "refunded"}',
    rubric=None,
    criteria="The agent refunds order A123 and tells the user when the money arrives.",
    category="退款",
)


def verdict(label: str, confidence: float = 0.9, **extra: Any) -> str:
    return json.dumps(
        {"verdict": label, "confidence": confidence, "reason": f"said {label}", **extra}
    )


def user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


OPENED: list[Gateway] = []
"""Gateways this test made; each owns SDK clients of the test's event loop."""


@pytest.fixture(autouse=True)
async def _close_gateways_after_each_test() -> AsyncIterator[None]:
    yield
    while OPENED:
        await OPENED.pop().aclose()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def judge_on(server: FakeOpenAI, agent_model: str | None = None, **settings: Any) -> Judge:
    models = {"judge": model_for(server, name="judge", model="gpt-4o-2024-08-06")}
    if agent_model:
        models["agent"] = model_for(server, name="agent", model=agent_model)
    gateway = Gateway(GatewayConfig(models=models))
    OPENED.append(gateway)
    return Judge(gateway, JudgeSettings(model="judge", **settings))


async def test_judge_reads_the_trace_and_returns_the_models_verdict(server: FakeOpenAI) -> None:
    def scripted(body: dict[str, Any]) -> str:
        # The scripted judge passes a refund only when the trace shows the refund tool ran.
        if "refund_order" in user_text(body):
            return verdict("PASS", 0.95, dimension_scores={"correctness": 1.0})
        return verdict("FAIL", 0.8, failure_type="hallucination")

    server.script = scripted
    judge = judge_on(server)

    passed = await judge.judge(REFUND, run_id="r1", case_id="c1", attempt=0)
    failed = await judge.judge(REFUND.model_copy(update={"trace_summary": ""}))

    assert (passed.verdict, passed.confidence, passed.failure_type) == ("PASS", 0.95, None)
    assert passed.dimension_scores == {"correctness": 1.0}
    assert (failed.verdict, failed.failure_type) == ("FAIL", "hallucination")
    assert passed.model == "judge" and passed.prompt_version == "v1"
    assert passed.prompt_hash == load_prompt("judge", "v1").hash
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert body["model"] == "gpt-4o-2024-08-06"
    prompt = user_text(body)
    for part in [*REFUND.turns, REFUND.reply, REFUND.criteria, REFUND.trace_summary]:
        assert part in prompt
    assert "not the style" in str(body["messages"][0]["content"])


async def test_fenced_json_with_trailing_text_is_repaired_without_a_new_call(
    server: FakeOpenAI,
) -> None:
    server.script = f"Here is my verdict:\n```json\n{verdict('FAIL')}\n```\nHope this helps."
    judge = judge_on(server)

    result = await judge.judge(REFUND)

    assert result.verdict == "FAIL"
    assert len(server.requests) == 1


async def test_malformed_answer_is_retried_and_the_valid_one_used(server: FakeOpenAI) -> None:
    server.script = ["PASS, definitely", verdict("PASS", 0.7)]
    judge = judge_on(server)

    result = await judge.judge(REFUND)

    assert (result.verdict, result.confidence) == ("PASS", 0.7)
    assert len(server.requests) == 2
    # A different seed per try keeps the cached malformed answer from being served again.
    assert server.requests[0].body["seed"] != server.requests[1].body["seed"]


async def test_always_malformed_raises_judge_error_after_max_retries(server: FakeOpenAI) -> None:
    server.script = json.dumps({"verdict": "MAYBE", "confidence": 2})
    judge = judge_on(server, max_retries=2)

    with pytest.raises(JudgeError, match="no usable answer in 3 tries") as caught:
        await judge.judge(REFUND)

    assert caught.value.failure_type == "judge_error"
    assert isinstance(caught.value, GatewayError)
    assert len(server.requests) == 3


async def test_an_answer_cut_off_at_max_tokens_names_the_setting_to_raise(
    server: FakeOpenAI,
) -> None:
    # A weak judge that spends its budget on the reason never closes the object.
    server.script = FakeReply(
        text='{"verdict": "PASS", "confidence": 0.9, "reason": "' + "很好 " * 200,
        finish_reason="length",
    )
    judge = judge_on(server, max_tokens=64, max_retries=1)

    with pytest.raises(JudgeError, match=r"cut off at judge.max_tokens \(64\)"):
        await judge.judge(REFUND)

    assert [r.body["max_tokens"] for r in server.requests] == [64, 64]


async def test_a_failing_model_call_becomes_judge_error(server: FakeOpenAI) -> None:
    server.script = FakeReply(status=400)
    judge = judge_on(server)

    with pytest.raises(JudgeError, match="could not be called") as caught:
        await judge.judge(REFUND)

    assert isinstance(caught.value.__cause__, GatewayError)


async def test_three_samples_take_the_majority_and_mean_confidence(server: FakeOpenAI) -> None:
    server.script = [
        verdict("PASS", 0.9),
        verdict("FAIL", 0.6, failure_type="wrong_args"),
        verdict("PASS", 0.6),
    ]
    judge = judge_on(server, samples=3)

    result = await judge.judge(REFUND)

    assert result.verdict == "PASS"
    assert result.failure_type is None
    assert result.confidence == pytest.approx(0.7)
    assert [s.verdict for s in result.samples] == ["PASS", "FAIL", "PASS"]
    assert result.reason.startswith("2 of 3 samples said PASS")
    assert len({r.body["seed"] for r in server.requests}) == 3


async def test_samples_without_a_majority_give_warning(server: FakeOpenAI) -> None:
    server.script = [verdict("PASS"), verdict("FAIL"), verdict("WARNING")]
    judge = judge_on(server, samples=3)

    result = await judge.judge(REFUND)

    assert result.verdict == "WARNING"
    assert "did not agree" in result.reason


def test_judge_of_the_agents_model_or_family_is_refused_unless_allowed(
    server: FakeOpenAI,
) -> None:
    same_id = judge_on(server)
    same_family = judge_on(server, agent_model="gpt-4o-2024-11-20")
    other = judge_on(server, agent_model="claude-sonnet-4-20250514")
    allowed = judge_on(server, agent_model="gpt-4o-2024-11-20", allow_same_model=True)

    own = same_id.refuse_same_model("gpt-4o-2024-08-06")
    assert own is not None and "agent's own model" in own and "allow_same_model" in own
    family = same_family.refuse_same_model("agent")
    assert family is not None and "family 'gpt-4o'" in family
    assert same_family.refuse_same_model("gpt-4o-mini") is None
    assert other.refuse_same_model("agent") is None
    assert allowed.refuse_same_model("agent") is None
    assert same_id.refuse_same_model(None) is None


def test_a_judge_without_a_configured_model_says_how_to_set_one(server: FakeOpenAI) -> None:
    gateway = Gateway(GatewayConfig(models={"judge": model_for(server, name="judge")}))

    with pytest.raises(ConfigError, match="judge.model"):
        Judge(gateway, JudgeSettings())
    with pytest.raises(ConfigError, match="not among models"):
        Judge(gateway, JudgeSettings(model="gpt-5"))
    with pytest.raises(ConfigError, match="shipped: v1"):
        Judge(gateway, JudgeSettings(model="judge", prompt_version="v9"))


async def test_compare_picks_the_output_the_model_prefers_on_llmbar_items(
    server: FakeOpenAI,
) -> None:
    items = json.loads((LLMBAR / "LLMBar_Natural.dataset.json").read_text(encoding="utf-8"))[:6]
    gold = {item["input"]: item for item in items}

    def scripted(body: dict[str, Any]) -> str:
        # A judge that agrees with the human label, found by the input it is shown.
        prompt = user_text(body)
        item = next(i for text, i in gold.items() if text in prompt)
        better = item[f"output_{item['label']}"]
        slot = 1 if prompt.index(better) < prompt.index("Output 2:") else 2
        return json.dumps({"better": slot, "reason": "follows the instruction"})

    server.script = scripted
    judge = judge_on(server)

    picked = [await judge.compare(i["input"], i["output_1"], i["output_2"]) for i in items]
    swapped = [await judge.compare(i["input"], i["output_2"], i["output_1"]) for i in items]

    assert picked == [i["label"] for i in items]
    assert swapped == [3 - i["label"] for i in items]


async def test_factuality_is_the_share_of_claims_the_reference_supports(
    server: FakeOpenAI,
) -> None:
    def claims(status: str) -> dict[str, Any]:
        return {"claim": f"a {status} claim", "status": status, "evidence": ""}

    server.script = [
        json.dumps({"claims": [claims("supported"), claims("supported"), claims("contradicted")]}),
        json.dumps({"claims": []}),
    ]
    judge = judge_on(server)

    share, detail = await judge.factuality("退款 3 个工作日到账，免手续费", "退款 3 个工作日到账")
    none_share, none_detail = await judge.factuality("您好！", "退款 3 个工作日到账")

    assert share == pytest.approx(2 / 3)
    assert [d["status"] for d in detail] == ["supported", "supported", "contradicted"]
    assert (none_share, none_detail) == (1.0, [])
    assert "退款 3 个工作日到账" in user_text(server.requests[0].body)


def test_parse_json_object_repairs_only_what_holds_one_object() -> None:
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('verdict: {"a": 1} -- done') == {"a": 1}
    assert parse_json_object('```\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object("[1, 2]") is None
    assert parse_json_object("no json here") is None


def test_prompt_hash_is_the_sha256_of_the_shipped_template() -> None:
    template = load_prompt("judge", "v1")

    assert template.hash == hashlib.sha256(template.text.encode("utf-8")).hexdigest()
    assert template.hash != load_prompt("compare", "v1").hash


def test_the_judge_section_of_seatrial_yaml_configures_the_judge(tmp_path: Path) -> None:
    models = "models:\n  grader:\n    model: gpt-4o-2024-08-06\n    base_url: http://127.0.0.1:1\n"
    (tmp_path / "seatrial.yaml").write_text(
        models + "judge:\n  model: grader\n  samples: 3\n  max_tokens: 300\n", encoding="utf-8"
    )
    config = load_config(tmp_path)
    judge = config.judge
    assert (judge.model, judge.samples, judge.min_agreement, judge.max_tokens) == (
        "grader",
        3,
        0.85,
        300,
    )

    (tmp_path / "seatrial.yaml").write_text(models + "judge:\n  model: gpt-5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="judge.model 'gpt-5' is not among models"):
        load_config(tmp_path)
