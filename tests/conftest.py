"""Shared fixtures: suites written into tmp_path, test agents, a SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from seatrial.store import Store

HERE = Path(__file__).parent
AGENTS = HERE / "agents.py"


def agent_spec(function: str) -> str:
    """A python: spec for a function in tests/agents.py."""
    return f"python:{AGENTS}:{function}"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store in tmp_path."""
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


@pytest.fixture
def write_suite(tmp_path: Path):
    """Write a YAML suite into tmp_path and return its path."""

    def write(text: str, name: str = "suite.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
