"""Fake chat platforms on loopback, stopped after each test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.notify.bots import Bot


@pytest.fixture
def bot() -> Iterator[Callable[..., Bot]]:
    started: list[Bot] = []

    def start(kind: str, secret: str | None = None, **kwargs: Any) -> Bot:
        running = Bot(kind, secret, **kwargs).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
