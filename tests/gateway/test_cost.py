"""Cost: the shipped price table, per-model overrides, pricing a call, the ledger row."""

from __future__ import annotations

import json

import pytest

from seatrial.gateway._config import ModelConfig, Price
from seatrial.gateway._cost import (
    PRICE_TABLE_PATH,
    cost_usd,
    model_call_row,
    price_for,
    price_table,
)
from seatrial.gateway._types import ChatRequest, ChatResponse, Message, Usage


@pytest.fixture(scope="module")
def table() -> dict[str, Price]:
    """The shipped table, read here independently of the code under test."""
    raw = json.loads(PRICE_TABLE_PATH.read_text(encoding="utf-8"))
    return {name: Price.model_validate(price) for name, price in raw["models"].items()}


def model(model_id: str, **fields: object) -> ModelConfig:
    return ModelConfig.model_validate({"name": "m", "model": model_id, **fields})


def test_every_shipped_entry_is_a_valid_price_found_under_its_own_id(
    table: dict[str, Price],
) -> None:
    assert len(table) >= 30
    assert price_table() == table
    for model_id, price in table.items():
        assert price_for(model(model_id)) == price, model_id


def test_a_dated_openai_snapshot_is_priced_as_its_family(table: dict[str, Price]) -> None:
    assert price_for(model("gpt-4o-2024-08-06")) == table["gpt-4o"]
    assert price_for(model("gpt-4o-mini-2024-07-18")) == table["gpt-4o-mini"]
    assert price_for(model("gpt-4.1-2025-04-14")) == table["gpt-4.1"]


def test_a_snapshot_with_its_own_price_is_not_priced_as_its_family(
    table: dict[str, Price],
) -> None:
    old = price_for(model("gpt-4o-2024-05-13"))
    assert old == table["gpt-4o-2024-05-13"]
    assert old != table["gpt-4o"]


def test_anthropic_ids_with_dates_providers_and_vertex_suffixes_find_their_price(
    table: dict[str, Price],
) -> None:
    assert price_for(model("claude-3-5-haiku-20241022")) == table["claude-3-5-haiku"]
    assert price_for(model("anthropic/claude-sonnet-4-5-20250929")) == table["claude-sonnet-4-5"]
    assert price_for(model("claude-3-5-sonnet@20240620")) == table["claude-3-5-sonnet"]
    assert price_for(model("claude-3-7-sonnet-latest")) == table["claude-3-7-sonnet"]


def test_a_variant_id_takes_the_longest_matching_family(table: dict[str, Price]) -> None:
    assert price_for(model("gpt-4o-mini-search-preview")) == table["gpt-4o-mini"]
    assert price_for(model("gemini-2.5-flash-preview-05-20")) == table["gemini-2.5-flash"]
    assert price_for(model("o1-pro-2025-03-19")) == table["o1-pro"]


def test_an_unknown_local_model_has_no_price_and_costs_nothing() -> None:
    local = model("Qwen/Qwen2.5-7B-Instruct", base_url="http://127.0.0.1:8000/v1")
    assert price_for(local) is None
    assert cost_usd(Usage(input_tokens=5000, output_tokens=700), price_for(local)) == 0.0


def test_a_models_own_price_overrides_the_table(table: dict[str, Price]) -> None:
    mine = Price(input_per_mtok=1.0, output_per_mtok=2.0)
    assert table["gpt-4o"] != mine
    assert price_for(model("gpt-4o", price=mine.model_dump())) == mine


def test_cost_charges_input_and_output_per_million_tokens(table: dict[str, Price]) -> None:
    price = table["claude-sonnet-4-5"]
    usage = Usage(input_tokens=12_000, output_tokens=800)
    expected = (12_000 * price.input_per_mtok + 800 * price.output_per_mtok) / 1_000_000
    assert cost_usd(usage, price_for(model("claude-sonnet-4-5-20250929"))) == pytest.approx(
        expected
    )


def test_cached_input_tokens_are_charged_at_the_cached_price(table: dict[str, Price]) -> None:
    price = table["gpt-4o"]
    assert price.cached_input_per_mtok is not None
    usage = Usage(input_tokens=10_000, cached_input_tokens=8_000, output_tokens=500)
    expected = (
        2_000 * price.input_per_mtok
        + 8_000 * price.cached_input_per_mtok
        + 500 * price.output_per_mtok
    ) / 1_000_000
    assert cost_usd(usage, price) == pytest.approx(expected)
    uncached = cost_usd(Usage(input_tokens=10_000, output_tokens=500), price)
    assert cost_usd(usage, price) < uncached


def test_without_a_cached_price_cached_tokens_cost_the_input_price(
    table: dict[str, Price],
) -> None:
    price = table["qwen-max"]
    assert price.cached_input_per_mtok is None
    with_cache = Usage(input_tokens=4_000, cached_input_tokens=3_000, output_tokens=100)
    without = Usage(input_tokens=4_000, output_tokens=100)
    assert cost_usd(with_cache, price) == pytest.approx(cost_usd(without, price))


def test_a_ledger_row_records_who_called_what_and_the_cost_but_not_the_conversation() -> None:
    request = ChatRequest(
        messages=[Message(role="user", content="my card is 4111 1111 1111 1111")],
        purpose="judge",
        run_id="run-1",
        case_id="refund",
        attempt=2,
    )
    response = ChatResponse(
        message=Message(role="assistant", content="PASS: the refund was explained"),
        usage=Usage(input_tokens=900, output_tokens=30, cached_input_tokens=512),
        cost_usd=0.0031,
        model="judge",
        provider_model="gpt-4o-2024-08-06",
        latency_ms=420.0,
        fallback_used=True,
        fault="latency",
    )
    row = model_call_row(request, response, created_at=1_763_000_000.0)
    assert row.model_dump(exclude={"id"}) == {
        "run_id": "run-1",
        "case_id": "refund",
        "attempt": 2,
        "purpose": "judge",
        "model": "judge",
        "provider_model": "gpt-4o-2024-08-06",
        "input_tokens": 900,
        "output_tokens": 30,
        "cached_input_tokens": 512,
        "cost_usd": 0.0031,
        "priced": True,
        "latency_ms": 420.0,
        "cached": False,
        "fallback_used": True,
        "fault": "latency",
        "created_at": 1_763_000_000.0,
        "status": "ok",
    }
    # The id is random hex, which holds "4111" once in a few thousand rows: it is left out.
    stored = row.model_dump_json(exclude={"id"})
    assert "4111" not in stored and "my card is" not in stored
    assert "refund was explained" not in stored
