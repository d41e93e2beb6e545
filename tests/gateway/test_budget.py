"""Budgets: a warning at warn_at of a limit, new calls refused once it is spent."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from seatrial.errors import BudgetExceeded
from seatrial.gateway import ChatRequest, Gateway, GatewayConfig, Message, ModelConfig, Price
from seatrial.gateway._budget import DEFAULT_REFRESH_S, Budget
from seatrial.gateway._config import BudgetConfig
from seatrial.store import ModelCallRow, Store
from seatrial.testing import FakeReply, ScriptedModel


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        yield store


def test_a_run_may_call_until_its_budget_is_spent_then_is_refused() -> None:
    budget = Budget(BudgetConfig(run_usd=1.0), warn=lambda _: None)
    budget.check("run-1")
    budget.add("run-1", 0.6)
    budget.check("run-1")
    budget.add("run-1", 0.4)
    with pytest.raises(BudgetExceeded) as refused:
        budget.check("run-1")
    message = str(refused.value)
    assert "'run-1'" in message and "$1.00" in message and "gateway.budgets.run_usd" in message
    budget.check("run-2")


def test_the_warning_comes_once_when_warn_at_of_the_budget_is_reached() -> None:
    warnings: list[str] = []
    budget = Budget(BudgetConfig(run_usd=10.0, warn_at=0.5), warn=warnings.append)
    budget.add("run-1", 4.9)
    assert warnings == []
    budget.add("run-1", 0.2)
    assert len(warnings) == 1
    assert "'run-1'" in warnings[0] and "51%" in warnings[0] and "$10.00" in warnings[0]
    budget.add("run-1", 3.0)
    assert len(warnings) == 1
    budget.add("run-2", 6.0)
    assert len(warnings) == 2 and "'run-2'" in warnings[1]


def test_warnings_go_to_the_gateway_logger_by_default(caplog: pytest.LogCaptureFixture) -> None:
    budget = Budget(BudgetConfig(project_usd=1.0))
    with caplog.at_level(logging.WARNING, logger="seatrial.gateway"):
        budget.add(None, 0.85)
    assert [r.name for r in caplog.records] == ["seatrial.gateway"]
    assert "project" in caplog.records[0].getMessage()
    assert "85%" in caplog.records[0].getMessage()


def test_the_project_budget_counts_every_run_and_calls_outside_runs() -> None:
    budget = Budget(BudgetConfig(project_usd=2.0), warn=lambda _: None)
    budget.add("run-1", 1.0)
    budget.add(None, 0.5)
    budget.check("run-2")
    budget.add("run-2", 0.5)
    assert budget.spent() == pytest.approx(2.0)
    assert budget.spent("run-2") == pytest.approx(0.5)
    with pytest.raises(BudgetExceeded, match="project_usd"):
        budget.check("run-3")
    with pytest.raises(BudgetExceeded, match="project"):
        budget.check(None)


def test_without_limits_nothing_is_refused_or_warned() -> None:
    warnings: list[str] = []
    budget = Budget(BudgetConfig(), warn=warnings.append)
    budget.add("run-1", 1_000.0)
    budget.check("run-1")
    assert warnings == []


def test_a_resumed_run_counts_what_it_spent_before_from_the_ledger(ledger: Store) -> None:
    ledger.record_model_calls(
        [
            ModelCallRow(run_id="run-1", model="gpt4o", cost_usd=0.7),
            ModelCallRow(run_id="run-1", purpose="judge", model="judge", cost_usd=0.2),
        ]
    )
    warnings: list[str] = []
    budget = Budget(BudgetConfig(run_usd=1.0), store=ledger, warn=warnings.append)
    assert budget.spent("run-1") == pytest.approx(0.9)
    budget.check("run-1")
    budget.add("run-1", 0.1)
    assert len(warnings) == 1
    with pytest.raises(BudgetExceeded, match="'run-1'"):
        budget.check("run-1")


def test_the_project_budget_counts_earlier_runs_in_the_store(ledger: Store) -> None:
    ledger.record_model_calls([ModelCallRow(run_id="old-run", model="gpt4o", cost_usd=4.5)])
    budget = Budget(BudgetConfig(project_usd=5.0), store=ledger, warn=lambda _: None)
    budget.check("new-run")
    budget.add("new-run", 0.5)
    with pytest.raises(BudgetExceeded, match="project"):
        budget.check("new-run")


def test_a_negative_cost_is_refused() -> None:
    budget = Budget(BudgetConfig(run_usd=1.0))
    with pytest.raises(ValueError):
        budget.add("run-1", -0.5)


async def _call_through(budget: Budget, store: Store, run_id: str, cost_usd: float) -> None:
    """One priced call as a gateway makes it: refresh, check, charge, ledger row."""
    await budget.refresh(run_id)
    budget.check(run_id)
    budget.add(run_id, cost_usd)
    store.record_model_calls([ModelCallRow(run_id=run_id, model="gpt4o", cost_usd=cost_usd)])


async def test_two_processes_on_one_store_hold_one_run_budget_between_them(
    ledger: Store,
) -> None:
    # Two workers' gateways: each its own Budget, one ledger. Read afresh before every call
    # (refresh_s=0), neither may let the run spend past its budget.
    workers = [
        Budget(BudgetConfig(run_usd=1.0), store=ledger, warn=lambda _: None, refresh_s=0.0)
        for _ in range(2)
    ]
    refused = 0
    for turn in range(10):
        try:
            await _call_through(workers[turn % 2], ledger, "run-1", 0.3)
        except BudgetExceeded:
            refused += 1
    assert ledger.spend("run-1") == pytest.approx(1.2)  # the 4th call crossed it, then none
    assert refused == 6
    for budget in workers:
        assert budget.spent("run-1") == pytest.approx(1.2)


async def test_another_processes_spend_counts_once_the_budget_reads_the_store_again(
    ledger: Store,
) -> None:
    ours = Budget(BudgetConfig(project_usd=2.0), store=ledger, warn=lambda _: None, refresh_s=0.0)
    await _call_through(ours, ledger, "run-1", 0.5)
    ledger.record_model_calls([ModelCallRow(run_id="run-2", model="gpt4o", cost_usd=1.5)])
    ours.check("run-1")  # not read again yet: the other process's spend is not seen
    await ours.refresh("run-1")
    assert ours.spent() == pytest.approx(2.0)
    with pytest.raises(BudgetExceeded, match="project"):
        ours.check("run-1")


async def test_a_budget_without_limits_never_reads_the_store_again(ledger: Store) -> None:
    budget = Budget(BudgetConfig(), store=ledger, warn=lambda _: None, refresh_s=0.0)
    await _call_through(budget, ledger, "run-1", 0.5)
    ledger.record_model_calls([ModelCallRow(run_id="run-1", model="gpt4o", cost_usd=9.0)])
    await budget.refresh("run-1")
    assert budget.spent("run-1") == pytest.approx(0.5)  # its own count, as read first


async def test_two_gateways_on_one_store_stop_a_run_once_their_calls_together_spent_it(
    ledger: Store,
) -> None:
    # Two workers' gateways on one store. Each call costs $0.50 of a $1.00 run budget: once
    # each gateway has made one, the run is spent, and the gateway that has not seen the
    # other's call yet sees it when it reads the ledger again (at most a second later).
    main = ModelConfig(
        name="main",
        provider="scripted",
        model="gpt-4o-mini",
        price=Price(input_per_mtok=500_000.0, output_per_mtok=0.0),
    )
    config = GatewayConfig(models={"main": main}, budgets=BudgetConfig(run_usd=1.0))
    model = ScriptedModel(FakeReply("ok", input_tokens=1, output_tokens=1))
    first, second = (Gateway(config, store=ledger, providers={"main": model}) for _ in range(2))
    request = ChatRequest(
        model="main", run_id="run-1", messages=[Message(role="user", content="hi")]
    )
    try:
        await second.chat(request)
        await first.chat(request)
        assert ledger.spend("run-1") == pytest.approx(1.0)
        await asyncio.sleep(DEFAULT_REFRESH_S + 0.1)  # let `second`'s last read go stale
        with pytest.raises(BudgetExceeded, match="'run-1'"):
            await second.chat(request)
    finally:
        await first.aclose()
        await second.aclose()
    assert len(model.requests) == 2
