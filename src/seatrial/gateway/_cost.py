"""What a model call costs: the shipped price table, per-model overrides, and the ledger row.

Prices are US dollars per million tokens. A model's own ``price:`` in ``seatrial.yaml`` wins;
otherwise its pinned id is looked up in ``prices.json`` (shipped with Seatrial): exactly, then
without a date or ``-latest`` suffix (``gpt-4o-2024-08-06`` -> ``gpt-4o``), then by the
longest table entry it starts with (``gemini-2.5-flash-preview-05-20`` ->
``gemini-2.5-flash``). A model found nowhere is *unpriced*: its calls are booked at $0 with
``priced: false``, and a run's report names it and calls its spend a lower bound. A local
model that really is free says so with ``price: {input_per_mtok: 0, output_per_mtok: 0}``.
"""

from __future__ import annotations

import json
import re
import time
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from seatrial.errors import GatewayError
from seatrial.gateway._config import ModelConfig, Price
from seatrial.gateway._spans import error_type
from seatrial.gateway._types import ChatRequest, ChatResponse, Usage
from seatrial.store import ModelCallRow

PRICE_TABLE_PATH = Path(__file__).with_name("prices.json")
"""The shipped price table."""

# Date stamps providers append to pinned ids: -2024-08-06, -20241022, -0613, -2411, -latest.
_VERSION_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|-latest)$")
_PER_TOKEN = 1_000_000


@lru_cache(maxsize=1)
def price_table() -> dict[str, Price]:
    """The shipped prices by model id (lower case), read once."""
    try:
        raw = json.loads(PRICE_TABLE_PATH.read_text(encoding="utf-8"))
        return {name.lower(): Price.model_validate(p) for name, p in raw["models"].items()}
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        raise GatewayError(
            f"cannot read the price table {PRICE_TABLE_PATH}: {exc}; reinstall seatrial, or "
            "give each model a `price:` in seatrial.yaml"
        ) from exc


def price_for(model: ModelConfig) -> Price | None:
    """The model's price: its own ``price:``, else the shipped table's; None when unknown."""
    if model.price is not None:
        return model.price
    return table_price(model.model)


@lru_cache(maxsize=1024)
def table_price(model_id: str) -> Price | None:
    """The shipped table's price for a provider's model id; None when it has none.

    Looked up once per id: an id the table lacks is matched against every entry, on every
    call it answered otherwise (0.1 ms of the proxy's CPU per call).
    """
    table = price_table()
    # litellm-style "openai/gpt-4o" and Vertex-style "claude-3-5-sonnet@20240620".
    name = model_id.lower().rsplit("/", 1)[-1].split("@", 1)[0]
    candidates = [name]
    while (stripped := _VERSION_SUFFIX.sub("", candidates[-1])) != candidates[-1]:
        candidates.append(stripped)
    for candidate in candidates:
        if candidate in table:
            return table[candidate]
    # Longest entry first, so gpt-4o-mini-search is priced as gpt-4o-mini, not gpt-4o.
    prefixes = [key for key in table if name.startswith(key + "-")]
    return table[max(prefixes, key=len)] if prefixes else None


def cost_usd(usage: Usage, price: Price | None) -> float:
    """US dollars for ``usage`` at ``price`` (0 without a price).

    Cached input tokens are charged at the cached-input price where the model has one.
    """
    if price is None:
        return 0.0
    cached = min(max(usage.cached_input_tokens, 0), max(usage.input_tokens, 0))
    fresh = max(usage.input_tokens, 0) - cached
    cached_price = (
        price.cached_input_per_mtok
        if price.cached_input_per_mtok is not None
        else price.input_per_mtok
    )
    total = (
        fresh * price.input_per_mtok
        + cached * cached_price
        + max(usage.output_tokens, 0) * price.output_per_mtok
    )
    return total / _PER_TOKEN


def model_call_row(
    request: ChatRequest, response: ChatResponse, *, created_at: float | None = None
) -> ModelCallRow:
    """The ledger row of a finished call (no prompt, no answer: only who, what and how much)."""
    return ModelCallRow(
        run_id=request.run_id,
        case_id=request.case_id,
        attempt=request.attempt,
        purpose=request.purpose,
        model=response.model,
        provider_model=response.provider_model,
        input_tokens=max(response.usage.input_tokens, 0),
        output_tokens=max(response.usage.output_tokens, 0),
        cached_input_tokens=max(response.usage.cached_input_tokens, 0),
        cost_usd=max(response.cost_usd, 0.0),
        priced=response.priced,
        latency_ms=max(response.latency_ms, 0.0),
        cached=response.cached,
        fallback_used=response.fallback_used,
        fault=response.fault,
        created_at=time.time() if created_at is None else created_at,
    )


def failed_call_row(
    request: ChatRequest, model: str, error: BaseException, latency_ms: float
) -> ModelCallRow:
    """The ledger row of a call that reached ``model`` and failed: ``timeout`` when its last
    try timed out, else ``error``; no tokens are known, and nothing is charged."""
    return ModelCallRow(
        run_id=request.run_id,
        case_id=request.case_id,
        attempt=request.attempt,
        purpose=request.purpose,
        model=model,
        latency_ms=max(latency_ms, 0.0),
        status="timeout" if error_type(error) == "timeout" else "error",
    )
