"""The server side of the store's connections ends mid-run (``pg_terminate_backend``, what
a PostgreSQL restart does to them): ``seatrial run`` waits, reconnects, retries the
transaction and finishes, with every attempt stored once and the undisturbed run's report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seatrial.testing import AgentServer
from tests.faults.conftest import (
    ATTEMPTS,
    PgStore,
    expected_keys,
    report_view,
    start_seatrial,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_a_run_survives_its_database_connections_being_terminated(
    tmp_path: Path,
    suite: Path,
    agent: AgentServer,
    pg_store: PgStore,
    undisturbed: dict[str, Any],
) -> None:
    log = tmp_path / "run.log"
    process = start_seatrial(
        "run",
        str(suite),
        "--agent",
        agent.url,
        "--db",
        pg_store.url,
        "--concurrency",
        "4",
        "--report-dir",
        str(tmp_path / "disturbed"),
        cwd=tmp_path,
        log=log,
    )
    try:
        # A write in flight when its connection ends, then connections ended while idle.
        pg_store.wait_for_stored(ATTEMPTS // 5, process)
        mid_transaction = pg_store.terminate_a_writer_mid_transaction(process)
        ended = [mid_transaction]
        for stored in (ATTEMPTS // 2, 3 * ATTEMPTS // 4):
            pg_store.wait_for_stored(stored, process)
            ended.append(pg_store.terminate_backends())
        returncode = process.wait(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = log.read_text(encoding="utf-8", errors="replace")

    assert returncode == 0, output
    assert mid_transaction >= 1, "no write of the run ever waited on the held run row"
    assert sum(ended) >= 3, f"the run held no connection to end: {ended}"
    assert "lost the database connection" in output
    assert pg_store.copies() == expected_keys()
    assert report_view(tmp_path / "disturbed" / "report.json") == undisturbed
