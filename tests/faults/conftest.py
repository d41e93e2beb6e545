"""Fixtures for the fault tests: a scripted HTTP agent, PostgreSQL stores, ``seatrial run``.

Every fault test runs the same suite twice against the same scripted agent, once
undisturbed and once through the fault, and compares: every attempt stored exactly once
(one row per (case, attempt), none missing) and the same report (verdicts, failure types and
reasons per attempt, totals, categories, gate).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from seatrial.store import Store
from seatrial.testing import AgentServer, HttpReply
from tests.store.conftest import PG_DATABASE, PG_HOST, PG_PORT, pg_schemas, pg_url, pg_user

__all__ = ["pg_schemas", "pg_user"]  # fixtures used here, defined with the store's tests

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
CASES = 60
REPEATS = 2
ATTEMPTS = CASES * REPEATS
ANSWER_DELAY_S = 0.1
"""How long the scripted agent takes per answer: keeps a run in flight for a few seconds."""


def scripted_reply(request: dict[str, Any]) -> HttpReply | str:
    """``case-N``: N divisible by 7 fails in the agent's own code (HTTP 500: ERROR,
    ``agent_error``), else divisible by 3 answers ``bad`` (FAIL), else ``ok`` (PASS)."""
    time.sleep(ANSWER_DELAY_S)
    number = int(str(request.get("message", "")).removeprefix("case-"))
    if number % 7 == 0:
        return HttpReply(500, f"scripted crash on case-{number}")
    return "ok" if number % 3 else "bad"


def suite_text(cases: int = CASES, repeats: int = REPEATS) -> str:
    """``cases`` cases ``c001`` ... asking for ``ok``, each run ``repeats`` times."""
    lines = ["suite: faults", "gate:", "  min_pass_rate: 0.5", "cases:"]
    for number in range(1, cases + 1):
        lines += [
            f"  - id: c{number:03d}",
            f'    input: "case-{number}"',
            f"    repeats: {repeats}",
            f"    category: {'even' if number % 2 == 0 else 'odd'}",
            "    assertions:",
            "      - type: contains",
            "        value: ok",
        ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """The fault tests' suite file."""
    path = tmp_path / "suite.yaml"
    path.write_text(suite_text(), encoding="utf-8")
    return path


@pytest.fixture
def agent() -> Iterator[AgentServer]:
    """The scripted agent, a real HTTP server on 127.0.0.1."""
    with AgentServer(scripted_reply) as server:
        yield server


def seatrial(*args: str, cwd: Path, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    """Run the ``seatrial`` command to its end."""
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "COLUMNS": "200"},
    )


def start_seatrial(*args: str, cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    """Start the ``seatrial`` command in the background, its output into ``log``."""
    with log.open("wb") as sink:
        return subprocess.Popen(
            [SEATRIAL, *args],
            cwd=cwd,
            env={**os.environ, "COLUMNS": "200"},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def report_view(report_json: Path) -> dict[str, Any]:
    """What two runs of the same suite and agent must share, from a report.json: each
    attempt's verdict, failure type and reason, the totals, the categories and the gate."""
    report = json.loads(report_json.read_text(encoding="utf-8"))
    attempts = sorted(
        (case["case_id"], a["attempt"], a["verdict"], a["failure_type"], a["reason"])
        for case in report["cases"]
        for a in case["attempts"]
    )
    return {
        "attempts": attempts,
        "case_verdicts": {c["case_id"]: c["verdict"] for c in report["cases"]},
        "summary": report["summary"],
        "categories": report["categories"],
        "gate": {k: report["gate"][k] for k in ("passed", "reasons")},
    }


@pytest.fixture
def undisturbed(suite: Path, agent: AgentServer, tmp_path: Path) -> dict[str, Any]:
    """The report view of the suite run once, undisturbed, into a SQLite store."""
    result = seatrial(
        "run",
        str(suite),
        "--agent",
        agent.url,
        "--db",
        f"sqlite:///{tmp_path / 'undisturbed.db'}",
        "--concurrency",
        "8",
        "--report-dir",
        str(tmp_path / "undisturbed"),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    view = report_view(tmp_path / "undisturbed" / "report.json")
    assert len(view["attempts"]) == ATTEMPTS
    assert {a[2] for a in view["attempts"]} == {"PASS", "FAIL", "ERROR"}
    return view


class PgStore:
    """A migrated PostgreSQL store in a schema of its own, whose connections carry an
    application name of their own, so a test can end exactly them."""

    def __init__(self, user: str, schema: str) -> None:
        self.application = f"seatrial-fault-{uuid.uuid4().hex[:10]}"
        self.url = f"{pg_url(user, schema)}&application_name={self.application}"
        self._user = user
        self._schema = schema
        Store.open(self.url).close()

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            host=PG_HOST,
            port=PG_PORT,
            user=self._user,
            dbname=PG_DATABASE,
            autocommit=True,
            options=f"-csearch_path={self._schema}",
        )

    def stored(self) -> int:
        """Attempt rows stored (0 before the schema has any)."""
        with self._connect() as connection:
            row = connection.execute("SELECT count(*) FROM attempts").fetchone()
            return int(row[0]) if row else 0

    def copies(self) -> dict[tuple[str, int], int]:
        """(case, attempt) -> how many rows hold it, over every run in the store."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT case_id, attempt, count(*) FROM attempts GROUP BY case_id, attempt"
            ).fetchall()
        return {(str(case), int(attempt)): int(count) for case, attempt, count in rows}

    def run_ids(self) -> list[str]:
        """The ids of the runs stored."""
        with self._connect() as connection:
            return [str(r[0]) for r in connection.execute("SELECT run_id FROM runs").fetchall()]

    def terminate_backends(self) -> int:
        """End the server side of every connection the store's users hold (what a server
        restart does to them); returns how many were ended."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND application_name = %s AND pid <> pg_backend_pid()",
                (PG_DATABASE, self.application),
            ).fetchall()
        return sum(1 for (ended,) in rows if ended)

    def terminate_a_writer_mid_transaction(
        self, process: subprocess.Popen[bytes], timeout_s: float = 90
    ) -> int:
        """Hold the run's row locked until a writer of the store waits on it inside its
        transaction (storing attempts checks their run), end every connection the store's
        users hold, then let go; returns how many connections were ended (0: no writer came).
        """
        with self._connect() as holder, holder.transaction():
            holder.execute("SELECT run_id FROM runs FOR UPDATE")
            deadline = time.monotonic() + timeout_s
            with self._connect() as watcher:
                while time.monotonic() < deadline and process.poll() is None:
                    row = watcher.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                        "AND wait_event_type = 'Lock'",
                        (self.application,),
                    ).fetchone()
                    if row is not None and row[0] > 0:
                        return self.terminate_backends()
                    time.sleep(0.01)
        return 0

    def wait_for_stored(
        self, at_least: int, process: subprocess.Popen[bytes], timeout_s: float = 90
    ) -> int:
        """Poll until ``at_least`` attempts are stored, or ``process`` ended; return how many
        are stored."""
        deadline = time.monotonic() + timeout_s
        stored = self.stored()
        while stored < at_least and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
            stored = self.stored()
        return stored


@pytest.fixture
def pg_store(pg_user: str, pg_schemas: Callable[[], str]) -> PgStore:
    """A fresh, migrated PostgreSQL store."""
    return PgStore(pg_user, pg_schemas())


def expected_keys() -> dict[tuple[str, int], int]:
    """Every (case, attempt) of the suite, once."""
    return {
        (f"c{number:03d}", attempt): 1
        for number in range(1, CASES + 1)
        for attempt in range(1, REPEATS + 1)
    }
