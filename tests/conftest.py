"""Shared fixtures: suites written into tmp_path, test agents, a SQLite store."""

from __future__ import annotations

import os
import sqlite3
import time
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


def shared_data(name: str) -> Path:
    """A folder of ../shared/data (real data written by others; see its README).

    ``SEATRIAL_TEST_DATA`` may point elsewhere; CI lays ``shared/`` beside the clone.
    """
    candidates = [
        Path(os.environ.get("SEATRIAL_TEST_DATA", "shared/data")),
        HERE.parents[0] / "shared" / "data",
        HERE.parents[1] / "shared" / "data",
    ]
    for folder in candidates:
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(
        f"shared/data/{name} not found; set SEATRIAL_TEST_DATA to the data folder"
    )


def wait_for_stored_attempts(db: Path, at_least: int, timeout_s: float = 60) -> int:
    """Poll a run's SQLite store (written by another process) until it holds ``at_least``
    attempts; return how many it holds."""
    deadline = time.monotonic() + timeout_s
    stored = 0
    while time.monotonic() < deadline and stored < at_least:
        time.sleep(0.1)
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    stored = conn.execute("select count(*) from attempts").fetchone()[0]
            except sqlite3.OperationalError:  # the schema is still being created
                stored = 0
    return stored
