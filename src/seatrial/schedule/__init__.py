"""Scheduled jobs of `seatrial serve`: tiers, suites and the daily report on cron schedules,
each due time claimed once in the store."""

from seatrial.schedule._due import Due, DueCursor
from seatrial.schedule._jobs import JobOutcome, check_schedules, run_job, schedule_tag
from seatrial.schedule._scheduler import STOPPED_ERROR, Scheduler
from seatrial.schedule._thread import SchedulerThread

__all__ = [
    "STOPPED_ERROR",
    "Due",
    "DueCursor",
    "JobOutcome",
    "Scheduler",
    "SchedulerThread",
    "check_schedules",
    "run_job",
    "schedule_tag",
]
