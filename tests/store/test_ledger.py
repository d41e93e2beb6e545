"""The spend ledger: model calls stored with run, case, attempt and purpose, and summed."""

from __future__ import annotations

import uuid

import pytest

from seatrial.errors import StoreError
from seatrial.store import ModelCallRow, Store


def call(run_id: str | None, purpose: str = "agent", cost: float = 0.01, **fields: object):
    values: dict[str, object] = {
        "run_id": run_id,
        "case_id": "book-flight",
        "attempt": 1,
        "purpose": purpose,
        "model": "gpt4o",
        "provider_model": "gpt-4o-2024-08-06",
        "input_tokens": 1200,
        "output_tokens": 80,
        "cost_usd": cost,
        "latency_ms": 640.0,
        "created_at": 1_763_000_000.0,
    }
    values.update(fields)
    return ModelCallRow.model_validate(values)


def test_a_runs_spend_is_the_sum_of_its_calls_split_by_purpose(store: Store) -> None:
    run, other = uuid.uuid4().hex, uuid.uuid4().hex
    store.record_model_calls(
        [
            call(run, "agent", 0.25),
            call(run, "agent", 0.5, attempt=2),
            call(run, "judge", 0.125),
            call(run, "generation", 0.0625),
            call(other, "agent", 4.0),
        ]
    )
    assert store.spend(run) == pytest.approx(0.9375)
    assert store.spend(run, purpose="agent") == pytest.approx(0.75)
    assert store.spend(run, purpose="judge") == pytest.approx(0.125)
    assert store.spend_by_purpose(run) == pytest.approx(
        {"agent": 0.75, "generation": 0.0625, "judge": 0.125}
    )
    assert store.spend(other) == pytest.approx(4.0)


def test_a_run_without_calls_has_spent_nothing(store: Store) -> None:
    run = uuid.uuid4().hex
    assert store.spend(run) == 0.0
    assert store.spend(run, purpose="judge") == 0.0
    assert store.spend_by_purpose(run) == {}
    assert store.model_calls(run) == []


def test_the_project_spend_counts_every_run_and_calls_outside_runs(fresh_url: str) -> None:
    with Store.open(fresh_url) as store:
        assert store.spend() == 0.0
        store.record_model_calls(
            [call("r1", cost=1.5), call("r2", "judge", 0.25), call(None, "judge", 0.125)]
        )
        assert store.spend() == pytest.approx(1.875)
        assert store.spend(purpose="judge") == pytest.approx(0.375)
        assert store.spend_by_purpose() == pytest.approx({"agent": 1.5, "judge": 0.375})


def test_stored_calls_read_back_as_written_oldest_first(store: Store) -> None:
    run = uuid.uuid4().hex
    rows = [
        call(run, created_at=1_763_000_002.0, attempt=2, cached=True, fault="empty"),
        call(
            run,
            "judge",
            created_at=1_763_000_001.0,
            cached_input_tokens=1024,
            fallback_used=True,
        ),
        call(run, case_id="cancel", created_at=1_763_000_003.0),
    ]
    store.record_model_calls(rows)
    assert store.model_calls(run) == [rows[1], rows[0], rows[2]]
    assert store.model_calls(run, case_id="book-flight", attempt=2) == [rows[0]]
    assert store.model_calls(run, case_id="cancel") == [rows[2]]


def test_the_ledger_survives_reopening_the_store(db_url: str) -> None:
    run = uuid.uuid4().hex
    with Store.open(db_url) as store:
        store.record_model_calls([call(run, cost=0.75)])
    with Store.open(db_url) as store:
        assert store.spend(run) == pytest.approx(0.75)


def test_a_batch_with_a_call_already_recorded_is_refused_whole(store: Store) -> None:
    run = uuid.uuid4().hex
    first = call(run, cost=1.0)
    store.record_model_calls([first])
    with pytest.raises(StoreError, match="record 2 model calls"):
        store.record_model_calls([call(run, cost=2.0), first])
    assert store.spend(run) == pytest.approx(1.0)


def test_recording_no_calls_writes_nothing(fresh_url: str) -> None:
    with Store.open(fresh_url) as store:
        store.record_model_calls([])
        assert store.spend_by_purpose() == {}
        assert store.spend() == 0.0


def test_a_row_refuses_negative_cost_and_tokens() -> None:
    with pytest.raises(ValueError):
        call("r", cost=-0.01)
    with pytest.raises(ValueError):
        call("r", input_tokens=-1)
