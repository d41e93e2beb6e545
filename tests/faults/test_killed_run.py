"""``seatrial run`` is killed (SIGKILL: no cleanup at all) mid-run, and ``seatrial run
--resume RUN`` finishes it: every attempt stored once, the undisturbed run's report, and
only the attempts that were not stored are sent to the agent again."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from seatrial.testing import AgentServer
from tests.faults.conftest import (
    ATTEMPTS,
    PgStore,
    expected_keys,
    report_view,
    seatrial,
    start_seatrial,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_a_killed_run_is_finished_by_resume_with_every_attempt_stored_once(
    tmp_path: Path,
    suite: Path,
    agent: AgentServer,
    pg_store: PgStore,
    undisturbed: dict[str, Any],
) -> None:
    agent.requests.clear()
    process = start_seatrial(
        "run",
        str(suite),
        "--agent",
        agent.url,
        "--db",
        pg_store.url,
        "--concurrency",
        "4",
        cwd=tmp_path,
        log=tmp_path / "killed.log",
    )
    try:
        stored_before = pg_store.wait_for_stored(ATTEMPTS // 3, process)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    kept = pg_store.stored()
    assert ATTEMPTS // 3 <= stored_before <= kept < ATTEMPTS
    (run_id,) = pg_store.run_ids()
    asked_before = len(agent.requests)

    resumed = seatrial(
        "run",
        "--resume",
        run_id,
        "--db",
        pg_store.url,
        "--report-dir",
        str(tmp_path / "resumed"),
        cwd=tmp_path,
    )

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"({kept} already stored)" in resumed.stdout
    assert pg_store.copies() == expected_keys()
    assert report_view(tmp_path / "resumed" / "report.json") == undisturbed
    # The resume asked the agent once for each attempt that was missing, and no more.
    assert len(agent.requests) - asked_before == ATTEMPTS - kept
