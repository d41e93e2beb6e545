"""Shared gateway fixtures: running fake model servers and models pointing at them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from seatrial.gateway._config import ModelConfig
from seatrial.testing import FakeAnthropic, FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI that echoes; set ``fake_openai.script`` to script it."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running FakeAnthropic that echoes; set ``fake_anthropic.script`` to script it."""
    with FakeAnthropic() as server:
        yield server


def model_for(server: FakeOpenAI | FakeAnthropic, **fields: Any) -> ModelConfig:
    """A ModelConfig calling ``server`` (OpenAI or Anthropic, by the server's kind)."""
    provider = "anthropic" if isinstance(server, FakeAnthropic) else "openai"
    values: dict[str, Any] = {
        "name": "main",
        "model": "fake-model-2024-01-01",
        "provider": provider,
        "base_url": server.base_url,
    }
    values.update(fields)
    return ModelConfig(**values)


@pytest.fixture
def openai_model(fake_openai: FakeOpenAI) -> ModelConfig:
    """Model ``main`` on the running FakeOpenAI."""
    return model_for(fake_openai)


@pytest.fixture
def anthropic_model(fake_anthropic: FakeAnthropic) -> ModelConfig:
    """Model ``main`` on the running FakeAnthropic."""
    return model_for(fake_anthropic, model="claude-fake-20250101")


@pytest.fixture
def refused_url(refused_port: int) -> str:
    """A 127.0.0.1 base URL where nothing listens (connection refused) for the whole test."""
    return f"http://127.0.0.1:{refused_port}/v1"
