"""When a schedule is due: cron in its time zone, and which missed due time runs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from seatrial.config import ScheduleConfig, load_config
from seatrial.errors import ConfigError
from seatrial.schedule import DueCursor

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    """An aware UTC moment from ``YYYY-MM-DD HH:MM[:SS]``."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def schedule(cron: str, timezone: str = "UTC", grace_s: float = 3600) -> ScheduleConfig:
    return ScheduleConfig(
        name="nightly", cron=cron, timezone=timezone, suites=["s.yaml"], grace_s=grace_s
    )


@pytest.mark.parametrize(
    ("timezone", "expected_utc"),
    [
        ("UTC", "2026-12-02 02:00"),
        ("Asia/Shanghai", "2026-12-01 18:00"),  # 02:00 +08:00 on Dec 2
        ("America/New_York", "2026-12-02 07:00"),  # 02:00 -05:00 (standard time)
    ],
)
def test_next_due_is_read_in_the_schedules_time_zone(timezone: str, expected_utc: str) -> None:
    due = schedule("0 2 * * *", timezone).next_after(at("2026-12-01 12:00"))
    assert due.astimezone(UTC) == at(expected_utc)
    assert str(due.tzinfo) == timezone  # said in the schedule's own zone


def test_next_due_is_strictly_after_and_last_due_includes_the_moment() -> None:
    every_five = schedule("*/5 * * * *")
    assert every_five.next_after(at("2026-12-01 10:05")) == at("2026-12-01 10:10")
    assert every_five.next_after(at("2026-12-01 10:04:59.900")) == at("2026-12-01 10:05")
    assert every_five.last_due(at("2026-12-01 10:05")) == at("2026-12-01 10:05")
    assert every_five.last_due(at("2026-12-01 10:04:59.999")) == at("2026-12-01 10:00")


def test_a_due_time_is_shown_in_the_schedules_zone() -> None:
    shanghai = schedule("0 2 * * *", "Asia/Shanghai")
    assert shanghai.shown(at("2026-12-01 18:00")) == "2026-12-02 02:00 Asia/Shanghai"
    assert shanghai.shown(at("2026-12-01 18:00").timestamp()) == "2026-12-02 02:00 Asia/Shanghai"


def test_the_due_time_slept_until_runs_however_late_the_server_woke() -> None:
    cursor = DueCursor(schedule("*/5 * * * *", grace_s=0))
    cursor.take(at("2026-12-01 10:01"))
    assert cursor.wait_for(at("2026-12-01 10:01")) == at("2026-12-01 10:05")
    due = cursor.take(at("2026-12-01 10:05:40"))
    assert due is not None and (due.at, due.missed, due.run) == (
        at("2026-12-01 10:05"),
        False,
        True,
    )
    assert cursor.take(at("2026-12-01 10:06")) is None  # once


def test_at_start_the_latest_missed_due_time_runs_within_its_grace() -> None:
    cursor = DueCursor(schedule("0 * * * *", grace_s=600))
    due = cursor.take(at("2026-12-01 10:09"))
    assert due is not None and (due.at, due.missed, due.run) == (at("2026-12-01 10:00"), True, True)


def test_at_start_a_missed_due_time_older_than_the_grace_is_not_run() -> None:
    cursor = DueCursor(schedule("0 * * * *", grace_s=600))
    due = cursor.take(at("2026-12-01 10:11"))
    assert due is not None and (due.at, due.run) == (at("2026-12-01 10:00"), False)
    assert cursor.take(at("2026-12-01 10:12")) is None  # skipped once, not again


def test_due_times_missed_during_a_long_job_run_once_the_latest_only() -> None:
    cursor = DueCursor(schedule("* * * * *", grace_s=120))
    cursor.take(at("2026-12-01 10:00:30"))
    cursor.wait_for(at("2026-12-01 10:00:30"))
    first = cursor.take(at("2026-12-01 10:01"))
    assert first is not None and first.run
    # The job took until 10:04:20: 10:02, 10:03 and 10:04 passed meanwhile.
    late = cursor.take(at("2026-12-01 10:04:20"))
    assert late is not None and (late.at, late.missed, late.run) == (
        at("2026-12-01 10:04"),
        True,
        True,
    )
    assert cursor.take(at("2026-12-01 10:04:30")) is None


def test_zero_grace_never_runs_a_missed_due_time() -> None:
    cursor = DueCursor(schedule("0 * * * *", grace_s=0))
    due = cursor.take(at("2026-12-01 10:00:01"))
    assert due is not None and not due.run


def test_an_unknown_time_zone_or_a_bad_cron_is_refused_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "seatrial.yaml").write_text(
        "schedules:\n"
        "  - {name: a, cron: '0 2 * * *', timezone: Mars/Olympus, suites: [s.yaml]}\n"
        "  - {name: b, cron: '0 2 * *', suites: [s.yaml]}\n"
        "  - {name: c, cron: '0 2 * * *', report: daily, agent: x}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    text = str(raised.value)
    assert "'Mars/Olympus' is not an IANA time zone" in text
    assert "is not a five-field cron expression" in text
    assert "runs no agent; remove `agent:`" in text


def test_a_valid_schedule_near_the_refused_ones_loads(tmp_path: Path) -> None:
    (tmp_path / "seatrial.yaml").write_text(
        "schedules:\n"
        "  - {name: a, cron: '0 2 * * 1-5', timezone: Asia/Shanghai, suites: [s.yaml],"
        " agent: x, grace_s: 0}\n",
        encoding="utf-8",
    )
    [loaded] = load_config(tmp_path).schedules
    assert (loaded.timezone, loaded.grace_s, loaded.job) == ("Asia/Shanghai", 0, "suites s.yaml")
