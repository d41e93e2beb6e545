"""Shared fixtures: suites written into tmp_path, test agents, a SQLite store."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seatrial.store import ReviewItem, Store

# pytest-xdist sets COLUMNS=80 in its workers, and a Rich console fixes its width from COLUMNS
# when it is made (the CLI's, on import): the CLI tests' own COLUMNS (CliRunner env) would then
# be ignored and long tmp paths wrapped. Without xdist the variable is unset here.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

# Seatrial prints in the reader's language (SEATRIAL_LANG, then the locale): the tests expect
# English unless they ask for another, whatever the machine running them is set to.
for _variable in ("SEATRIAL_LANG", "LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_variable, None)
os.environ["LANG"] = "C.UTF-8"

HERE = Path(__file__).parent
AGENTS = HERE / "agents.py"


SEATRIAL = str(Path(sys.executable).parent / "seatrial")
"""The console script installed beside the interpreter running the tests."""


def run_seatrial(*args: str, cwd: Path, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """``seatrial ARGS`` in a fresh process in ``cwd``, 200 columns wide, output captured."""
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "COLUMNS": "200"},
    )


def agent_spec(function: str) -> str:
    """A python: spec for a function in tests/agents.py."""
    return f"python:{AGENTS}:{function}"


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A 127.0.0.1 port that refuses connections for the whole test. A socket bound to it,
    never listening, holds it: a port merely found free and closed could be taken meanwhile
    by a server another test starts in parallel (pytest-xdist), which would then answer."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


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


DATA = HERE / "data"


def bundled_data(name: str) -> Path:
    """A file or folder under tests/data: real data written by others, copied unchanged
    (tests/data/README.md names each file's source, commit and licence)."""
    path = DATA / name
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: tests read only files inside the repository; copy the file "
            "into tests/data and name its source in tests/data/README.md"
        )
    return path


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


def queued_items(refund_output: str = "已经帮您完成退款") -> list[ReviewItem]:
    """Three open review items of two runs, oldest first (judge WARNING, low confidence,
    disagreement), for the review queue's tests."""
    return [
        ReviewItem(
            run_id="run-1",
            case_id="refund",
            attempt=1,
            assertion_id="judge",
            why="warning",
            judge_model="judge-a",
            judge_verdict="WARNING",
            judge_reason="the reply says the refund is done; no refund tool ran",
            confidence=0.5,
            input="我要退款，订单 A1001",
            output=refund_output,
            category="退款",
            created_at=1_763_000_000.0,
        ),
        ReviewItem(
            run_id="run-1",
            case_id="booking",
            attempt=2,
            assertion_id="judge",
            why="low_confidence",
            judge_verdict="PASS",
            judge_reason="booked as asked",
            confidence=0.4,
            input="帮我预约周五的号",
            output="预约成功：周五 10:00",
            category="预约",
            created_at=1_763_000_010.0,
        ),
        ReviewItem(
            run_id="run-2",
            case_id="baggage",
            attempt=1,
            assertion_id="judge",
            why="disagreement",
            judge_verdict="FAIL",
            input="我能带几件行李？",
            output="两件",
            created_at=1_763_000_020.0,
        ),
    ]
