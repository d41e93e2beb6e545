"""Budgets: a warning at warn_at of a limit, new calls refused once it is spent."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from seatrial.errors import BudgetExceeded
from seatrial.gateway._budget import Budget
from seatrial.gateway._config import BudgetConfig
from seatrial.store import ModelCallRow, Store


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
