"""Running one scheduled job: a tier, suites, or the daily report.

Runs go through the same front door as ``seatrial run`` (:func:`seatrial._execute.
execute_suite_async`, or :func:`seatrial.tier.run_tier_async`, which calls it), tagged
``schedule:NAME``. A job never raises for what went wrong inside it: it returns an outcome
that says so, with the runs it had started, and the scheduler records it.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from seatrial._execute import NoticeLevel, default_options, execute_suite_async
from seatrial.config import Config, ScheduleConfig
from seatrial.errors import ConfigError, SeatrialError
from seatrial.i18n import gettext as _
from seatrial.i18n import reader_language, use_language
from seatrial.store import ScheduleStatus, Store

log = logging.getLogger("seatrial.schedule")

Say = Callable[[str], None]
"""Receives what the scheduler has to say, one line at a time."""


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended."""

    status: ScheduleStatus
    """``ok``, ``failed`` (a run did not meet its gates) or ``error``."""
    run_ids: tuple[str, ...] = ()
    """The runs it started, in order, also when it stopped on an error."""
    error: str | None = None
    """Why it is ``error`` (or which deliveries failed)."""


def schedule_tag(schedule: ScheduleConfig) -> str:
    """The tag every run a schedule starts carries."""
    return f"schedule:{schedule.name}"


def check_schedules(config: Config) -> None:
    """Refuse, before a server starts, schedules that could never run.

    Raises:
        ConfigError: a ``report: daily`` schedule and no channel of ``alerts:`` receiving
            ``daily_report``; a ``suites:`` path that does not exist; a ``${NAME}`` of
            ``alerts:`` that is not set (every scheduled run would stop on it).
        InputError: ``SEATRIAL_LANG`` names no language Seatrial speaks (the language of
            every job's alerts and reports).
    """
    from seatrial.notify import check_channels

    reader_language(None, config.language)
    where = config.file or "seatrial.yaml"
    if config.schedules and config.alerts.channels:
        check_channels(config.alerts)
    for schedule in config.schedules:
        if schedule.report is not None:
            takers = [c for c in config.alerts.channels.values() if "daily_report" in c.events]
            if not takers:
                raise ConfigError(
                    _(
                        "{file}: schedule {name} sends the daily report, but no channel of "
                        "`alerts:` receives `daily_report`; add one (see docs/monitoring.md)"
                    ).format(file=where, name=repr(schedule.name))
                )
        if schedule.suites:
            config.suite_files(schedule.suites)


async def run_job(
    config: Config,
    schedule: ScheduleConfig,
    store: Store,
    due: dt.datetime,
    *,
    db: str | None = None,
    say: Say | None = None,
) -> JobOutcome:
    """Run ``schedule``'s job for the due time ``due`` and say how it ended.

    ``store`` is the open store the runs are written to; ``db`` its URL, for a tier (which
    opens its own).
    """
    tell = say or (lambda line: None)

    def notice(level: NoticeLevel, text: str) -> None:
        if level != "info":
            tell(f"schedule {schedule.name}: {text}")

    # A schedule has no --lang: its alerts and reports read SEATRIAL_LANG, `language:`, the
    # locale, as any command does (checked by check_schedules before the first job).
    with use_language(reader_language(None, config.language)):
        if schedule.tier:
            return await _run_tier(config, schedule, db, notice)
        if schedule.suites:
            return await _run_suites(config, schedule, store, notice)
        return await _send_daily_report(config, schedule, store, due)


async def _run_suites(
    config: Config,
    schedule: ScheduleConfig,
    store: Store,
    notice: Callable[[NoticeLevel, str], None],
) -> JobOutcome:
    options = default_options(config, tags=[schedule_tag(schedule)])
    run_ids: list[str] = []
    failed = False
    try:
        for path in config.suite_files(schedule.suites):
            result = await execute_suite_async(
                path,
                schedule.agent,
                config=config,
                options=options,
                store=store,
                on_notice=notice,
                with_attempts=False,
            )
            run_ids.append(result.run_id)
            if result.interrupted:
                return JobOutcome("error", tuple(run_ids), f"run {result.run_id} interrupted")
            failed = failed or not result.passed
    except Exception as exc:  # recorded with the runs so far; the scheduler goes on
        return JobOutcome("error", tuple(run_ids), _describe(exc))
    return JobOutcome("failed" if failed else "ok", tuple(run_ids))


async def _run_tier(
    config: Config,
    schedule: ScheduleConfig,
    db: str | None,
    notice: Callable[[NoticeLevel, str], None],
) -> JobOutcome:
    from seatrial.tier import TierRun, run_tier_async

    assert schedule.tier is not None
    run_ids: list[str] = []

    def ran(run: TierRun) -> None:
        run_ids.append(run.run.run_id)

    try:
        outcome = await run_tier_async(
            config,
            schedule.tier,
            agent=schedule.agent,
            db=db,
            on_notice=notice,
            on_run=ran,
            tags=[schedule_tag(schedule)],
        )
    except Exception as exc:  # recorded with the runs so far; the scheduler goes on
        return JobOutcome("error", tuple(run_ids), _describe(exc))
    run_ids = [run.run.run_id for run in outcome.runs]
    if any(run.run.interrupted for run in outcome.runs):
        return JobOutcome("error", tuple(run_ids), "a run of the tier was interrupted")
    return JobOutcome("ok" if outcome.passed else "failed", tuple(run_ids))


async def _send_daily_report(
    config: Config, schedule: ScheduleConfig, store: Store, due: dt.datetime
) -> JobOutcome:

    from seatrial.notify import notify
    from seatrial.report import daily_notification, daily_report

    zone = ZoneInfo(schedule.timezone)
    day = due.astimezone(zone).date() - dt.timedelta(days=1)
    try:
        report = daily_report(store, day, tz=zone)
        link = config.dashboard_address()
        deliveries = await notify(config.alerts, daily_notification(report, dashboard_url=link))
    except Exception as exc:
        return JobOutcome("error", (), _describe(exc))
    # Quiet hours are the team's choice, not a failure of the job.
    unsent = [d for d in deliveries if not d.sent and not d.reason.startswith("quiet hours")]
    if unsent:
        lines = "; ".join(d.line() for d in unsent)
        return JobOutcome("error", (), f"the daily report of {day}: {lines}")
    return JobOutcome("ok")


def _describe(exc: BaseException) -> str:
    """What a failed job records: Seatrial's own message, else the exception with its type."""
    if isinstance(exc, SeatrialError):
        return str(exc)
    log.error("a scheduled job failed", exc_info=exc)
    return f"{type(exc).__name__}: {exc}"
