"""The calibration policy: which calibrations vouch for a judge, and the bar they must reach."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest

from seatrial.gateway import Gateway, GatewayConfig
from seatrial.judge import Judge, JudgeSettings, trust_of
from seatrial.store import Calibration
from seatrial.testing import FakeOpenAI
from tests.gateway.conftest import model_for


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def judge(server: FakeOpenAI) -> AsyncIterator[Judge]:
    models = {"judge": model_for(server, name="judge", model="gpt-4o-2024-08-06")}
    gateway = Gateway(GatewayConfig(models=models))
    yield Judge(gateway, JudgeSettings(model="judge", min_agreement=0.85, min_labels=100))
    await gateway.aclose()


def measured(model: str, prompt_hash: str, agreement: float, items: int = 200) -> Calibration:
    return Calibration(
        judge_model=model,
        prompt_hash=prompt_hash,
        prompt_version="v1",
        created_at=time.time(),
        items=items,
        agreement=agreement,
        kappa=None,
        base_rate=0.5,
    )


async def test_a_calibration_of_another_prompt_or_model_does_not_unlock_the_gate(
    judge: Judge,
) -> None:
    pairwise = measured(judge.model, judge.compare_prompt_hash, 0.99)
    other_model = measured("other-judge", judge.prompt_hash, 0.99)
    gate = trust_of(judge, [pairwise, other_model])
    assert not gate.calibrated
    assert "no calibration yet" in gate.reason


async def test_the_judges_own_calibration_unlocks_the_gate_among_others(judge: Judge) -> None:
    own = measured(judge.model, judge.prompt_hash, 0.9)
    other_model = measured("other-judge", judge.prompt_hash, 0.1)
    gate = trust_of(judge, [other_model, own])
    assert gate.calibrated
    assert (gate.agreement, gate.items) == (0.9, 200)


async def test_the_newest_own_calibration_decides_and_a_drop_raises_the_alarm(
    judge: Judge,
) -> None:
    newer = measured(judge.model, judge.prompt_hash, 0.8)
    older = measured(judge.model, judge.prompt_hash, 0.9)
    gate = trust_of(judge, [newer, older])
    assert not gate.calibrated
    assert gate.alarm is not None and "fell below the bar" in gate.alarm


async def test_enough_agreement_on_too_few_labels_stays_advisory(judge: Judge) -> None:
    gate = trust_of(judge, [measured(judge.model, judge.prompt_hash, 1.0, items=99)])
    assert not gate.calibrated
    assert "under judge.min_agreement 85% on judge.min_labels 100 items" in gate.reason
