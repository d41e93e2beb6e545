"""The scheduler's loop on a virtual clock: due times run once each, claimed and recorded in a
real store; missed ones, failures, other servers' claims and stopping."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from seatrial.config import Config, ScheduleConfig
from seatrial.schedule import STOPPED_ERROR, JobOutcome, Scheduler, SchedulerThread
from seatrial.store import Store, claim_schedule, schedule_history

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


class VirtualTime:
    """A clock that jumps to the next nap's end once every task is waiting."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start
        self.naps: list[tuple[dt.datetime, asyncio.Future[None]]] = []

    def clock(self) -> dt.datetime:
        return self.now

    async def nap(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.naps.append((self.now + dt.timedelta(seconds=seconds), future))
        await future

    async def run(self, scheduler: Scheduler, until: dt.datetime) -> None:
        """Run ``scheduler`` until the clock would pass ``until``, then stop it."""
        task = asyncio.create_task(scheduler.run())
        while True:
            for _ in range(50):  # let every task reach its next nap (or block)
                await asyncio.sleep(0)
            pending = [(end, f) for end, f in self.naps if not f.done()]
            if not pending or min(end for end, _ in pending) > until:
                break
            self.now = min(end for end, _ in pending)
            for end, future in pending:
                if end <= self.now:
                    future.set_result(None)
            self.naps = [(end, f) for end, f in pending if not f.done()]
        scheduler.stop()
        await task


class Jobs:
    """A job runner that records its calls; ``behaviour`` decides each outcome."""

    def __init__(self, clock: VirtualTime | None = None) -> None:
        self.calls: list[tuple[str, dt.datetime]] = []
        self.behaviour: dict[int, Any] = {}
        self.clock = clock

    async def __call__(
        self,
        config: Config,
        schedule: ScheduleConfig,
        store: Store,
        due: dt.datetime,
        *,
        db: str | None,
        say: Any,
    ) -> JobOutcome:
        index = len(self.calls)
        self.calls.append((schedule.name, due.astimezone(UTC)))
        action = self.behaviour.get(index)
        if isinstance(action, BaseException):
            raise action
        if isinstance(action, float) and self.clock is not None:
            self.clock.now += dt.timedelta(seconds=action)  # the job took this long
        if isinstance(action, asyncio.Event):
            await action.wait()
        return JobOutcome("ok", (f"run-{index}",))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def config_of(tmp_path: Path, *schedules: dict[str, Any]) -> Config:
    (tmp_path / "s.yaml").write_text("suite: s\ncases: []\n", encoding="utf-8")
    # grace_s 0 unless a test says otherwise: due times before the start are not run.
    made = [
        ScheduleConfig(**{"suites": ["s.yaml"], "grace_s": 0, **fields}) for fields in schedules
    ]
    return Config(project="p", project_dir=tmp_path, schedules=made)


def scheduler_for(config: Config, store: Store, clock: VirtualTime, jobs: Jobs) -> Scheduler:
    said: list[str] = []
    scheduler = Scheduler(
        config,
        store,
        claimed_by="me:1",
        clock=clock.clock,
        nap=clock.nap,
        job=jobs,
        say=said.append,
    )
    scheduler.said = said  # type: ignore[attr-defined]
    return scheduler


async def test_each_due_time_runs_once_claimed_and_recorded(tmp_path: Path, store: Store) -> None:
    clock = VirtualTime(at("2026-12-01 10:02"))
    jobs = Jobs()
    config = config_of(tmp_path, {"name": "five", "cron": "*/5 * * * *"})
    await clock.run(scheduler_for(config, store, clock, jobs), until=at("2026-12-01 10:16"))
    due = [at("2026-12-01 10:05"), at("2026-12-01 10:10"), at("2026-12-01 10:15")]
    assert jobs.calls == [("five", d) for d in due]
    history = schedule_history(store, "five")
    assert [(c.due_at, c.status, c.run_ids, c.claimed_by) for c in history] == [
        (d.timestamp(), "ok", (f"run-{i}",), "me:1") for i, d in reversed(list(enumerate(due)))
    ]


async def test_a_failing_job_is_recorded_and_the_next_due_time_still_runs(
    tmp_path: Path, store: Store
) -> None:
    clock = VirtualTime(at("2026-12-01 10:02"))
    jobs = Jobs()
    jobs.behaviour[0] = RuntimeError("the planner lost its state")
    config = config_of(tmp_path, {"name": "five", "cron": "*/5 * * * *"})
    await clock.run(scheduler_for(config, store, clock, jobs), until=at("2026-12-01 10:11"))
    older, newer = reversed(schedule_history(store, "five"))
    assert (older.status, older.error) == ("error", "RuntimeError: the planner lost its state")
    assert (newer.status, newer.error, newer.run_ids) == ("ok", None, ("run-1",))


async def test_a_due_time_another_server_claimed_is_not_run_here(
    tmp_path: Path, store: Store
) -> None:
    claim_schedule(store, "five", at("2026-12-01 10:05").timestamp(), claimed_by="other:2", now=0)
    clock = VirtualTime(at("2026-12-01 10:02"))
    jobs = Jobs()
    config = config_of(tmp_path, {"name": "five", "cron": "*/5 * * * *"})
    scheduler = scheduler_for(config, store, clock, jobs)
    await clock.run(scheduler, until=at("2026-12-01 10:11"))
    assert jobs.calls == [("five", at("2026-12-01 10:10"))]
    assert [c.claimed_by for c in schedule_history(store, "five")] == ["me:1", "other:2"]
    assert any("claimed by another server" in line for line in scheduler.said)  # type: ignore[attr-defined]


async def test_a_server_started_late_runs_only_the_latest_missed_due_time(
    tmp_path: Path, store: Store
) -> None:
    clock = VirtualTime(at("2026-12-01 10:17"))
    jobs = Jobs()
    config = config_of(tmp_path, {"name": "five", "cron": "*/5 * * * *", "grace_s": 600})
    scheduler = scheduler_for(config, store, clock, jobs)
    await clock.run(scheduler, until=at("2026-12-01 10:21"))
    assert jobs.calls == [("five", at("2026-12-01 10:15")), ("five", at("2026-12-01 10:20"))]
    assert any("was missed; running it late" in line for line in scheduler.said)  # type: ignore[attr-defined]


async def test_a_server_started_after_the_grace_runs_nothing_missed(
    tmp_path: Path, store: Store
) -> None:
    clock = VirtualTime(at("2026-12-01 10:17"))
    jobs = Jobs()
    config = config_of(tmp_path, {"name": "five", "cron": "*/5 * * * *", "grace_s": 60})
    await clock.run(scheduler_for(config, store, clock, jobs), until=at("2026-12-01 10:21"))
    assert jobs.calls == [("five", at("2026-12-01 10:20"))]


async def test_due_times_passed_during_a_long_job_run_once_afterwards(
    tmp_path: Path, store: Store
) -> None:
    clock = VirtualTime(at("2026-12-01 10:00:30"))
    jobs = Jobs(clock)
    jobs.behaviour[0] = 200.0  # the 10:00 job (missed at start, run late) ends at 10:03:50
    config = config_of(tmp_path, {"name": "minute", "cron": "* * * * *", "grace_s": 120})
    await clock.run(scheduler_for(config, store, clock, jobs), until=at("2026-12-01 10:06:10"))
    # 10:01 and 10:02 passed during the job: only the latest missed one, 10:03, runs.
    assert [due for _, due in jobs.calls] == [
        at("2026-12-01 10:00"),
        at("2026-12-01 10:03"),
        at("2026-12-01 10:04"),
        at("2026-12-01 10:05"),
        at("2026-12-01 10:06"),
    ]


async def test_one_schedules_long_job_does_not_hold_up_another(
    tmp_path: Path, store: Store
) -> None:
    clock = VirtualTime(at("2026-12-01 10:02"))
    jobs = Jobs()
    jobs.behaviour[0] = asyncio.Event()  # the hourly job never ends
    config = config_of(
        tmp_path,
        {"name": "hourly", "cron": "3 * * * *"},
        {"name": "five", "cron": "*/5 * * * *"},
    )
    await clock.run(scheduler_for(config, store, clock, jobs), until=at("2026-12-01 10:11"))
    assert jobs.calls == [
        ("hourly", at("2026-12-01 10:03")),
        ("five", at("2026-12-01 10:05")),
        ("five", at("2026-12-01 10:10")),
    ]
    [stopped] = schedule_history(store, "hourly")
    assert (stopped.status, stopped.error) == ("error", STOPPED_ERROR)


def test_the_scheduler_thread_stops_with_the_server(tmp_path: Path, store: Store) -> None:
    jobs = Jobs()
    config = config_of(tmp_path, {"name": "yearly", "cron": "0 0 1 1 *", "grace_s": 0})
    thread = SchedulerThread(Scheduler(config, store, job=jobs))
    thread.start()
    assert thread.alive
    thread.stop()
    assert not thread.alive
    assert jobs.calls == []
