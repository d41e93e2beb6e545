"""Two real ``seatrial serve`` processes on one store: a schedule due in the next minute runs
once, and both dashboards show it as the last run with the next due time."""

from __future__ import annotations

import datetime as dt
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from seatrial.store import Store, schedule_history
from tests.conftest import agent_spec
from tests.web.conftest import serve

SUITE = """\
suite: heartbeat
agent: {agent}
cases:
  - id: echoes
    input: hello
    assertions: [{{type: contains, value: "you said"}}]
"""

STARTUP_MARGIN_S = 20
"""Seconds left for both servers to start before the due time."""


def next_whole_minute(after: dt.datetime) -> dt.datetime:
    """The first whole minute at or after ``after``."""
    floor = after.replace(second=0, microsecond=0)
    return floor if floor == after else floor + dt.timedelta(minutes=1)


def schedules_api(base: str) -> dict[str, object]:
    answer = httpx.get(f"{base}/api/schedules", timeout=10)
    answer.raise_for_status()
    [schedule] = answer.json()["schedules"]
    assert isinstance(schedule, dict)
    return schedule


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_schedule_due_in_the_next_minute_runs_once_with_two_servers(tmp_path: Path) -> None:
    due = next_whole_minute(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=STARTUP_MARGIN_S))
    # The real cron path: an ordinary five-field expression naming that minute (UTC).
    cron = f"{due.minute} {due.hour} {due.day} {due.month} *"
    (tmp_path / "heartbeat.yaml").write_text(SUITE.format(agent=agent_spec("echo")), "utf-8")
    (tmp_path / "seatrial.yaml").write_text(
        f"project: sched\nschedules:\n  - {{name: heartbeat, cron: '{cron}', "
        "suites: [heartbeat.yaml]}\n",
        encoding="utf-8",
    )
    db_url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    with ExitStack() as servers:
        bases = [servers.enter_context(serve(db_url, tmp_path)) for _ in range(2)]
        before = schedules_api(bases[0])
        assert before["next_due_at"] == due.isoformat()
        deadline = time.monotonic() + (due - dt.datetime.now(dt.UTC)).total_seconds() + 90
        while True:
            last = schedules_api(bases[0])["last"]
            if isinstance(last, dict) and last["status"] != "running":
                break
            assert time.monotonic() < deadline, f"the schedule never finished: {last}"
            time.sleep(0.5)
        shown = [schedules_api(base) for base in bases]
    with Store.open(db_url) as store:
        runs = store.list_runs(tag="schedule:heartbeat")
        claims = schedule_history(store, "heartbeat")
    assert len(runs) == 1, [run.run_id for run in runs]
    assert [(c.due_at, c.status, c.run_ids) for c in claims] == [
        (due.timestamp(), "ok", (runs[0].run_id,))
    ]
    for schedule in shown:
        assert schedule["last"] == {
            "due_at": due.isoformat(),
            "due": f"{due:%Y-%m-%d %H:%M} UTC",
            "status": "ok",
            "run_ids": [runs[0].run_id],
            "error": None,
            "claimed_by": claims[0].claimed_by,
            "finished_at": schedule["last"]["finished_at"],  # type: ignore[index]
        }
        # The cron names a day of the year: next due is that minute of a later year.
        following = dt.datetime.fromisoformat(str(schedule["next_due_at"]))
        assert following > due and following.strftime("%m-%d %H:%M") == f"{due:%m-%d %H:%M}"
    logs = "".join(log.read_text() for log in tmp_path.glob("serve-*.log"))
    assert logs.count("running suites heartbeat.yaml") == 1
    assert logs.count("claimed by another server") == 1


def test_no_schedules_serves_the_dashboard_without_running_them(tmp_path: Path) -> None:
    (tmp_path / "heartbeat.yaml").write_text(SUITE.format(agent=agent_spec("echo")), "utf-8")
    (tmp_path / "seatrial.yaml").write_text(
        "project: sched\nschedules:\n  - {name: heartbeat, cron: '* * * * *', "
        "suites: [heartbeat.yaml]}\n",
        encoding="utf-8",
    )
    db_url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    with serve(db_url, tmp_path, "--no-schedules") as base:
        answer = httpx.get(f"{base}/api/schedules", timeout=10).json()
    assert answer["scheduling"] is False
    assert [s["name"] for s in answer["schedules"]] == ["heartbeat"]
    logs = "".join(log.read_text() for log in tmp_path.glob("serve-*.log"))
    assert "schedule heartbeat" not in logs
    with Store.open(db_url) as store:
        assert schedule_history(store, "heartbeat") == []
