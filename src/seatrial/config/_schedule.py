"""``schedules:`` of seatrial.yaml: the jobs ``seatrial serve`` starts on a cron schedule."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seatrial.i18n import gettext as _


class ScheduleConfig(BaseModel):
    """One scheduled job of ``seatrial serve``: a tier, suites, or the daily report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """Unique among schedules; runs it starts carry the tag ``schedule:NAME``."""
    cron: str = Field(min_length=1)
    """A five-field cron expression (``0 2 * * *``: 02:00 every day), in ``timezone``."""
    timezone: str = "UTC"
    """The IANA time zone the cron expression is read in (``Asia/Shanghai``)."""
    tier: str | None = None
    """Run this tier of ``tiers:``."""
    suites: list[str] = Field(default_factory=list)
    """Or run these suite files or folders (relative to the project folder)."""
    agent: str | None = None
    """The agent for ``suites`` (or to override the tier's)."""
    report: Literal["daily"] | None = None
    """Or send the daily report of the day before through ``alerts:``."""
    grace_s: float = Field(default=3600, ge=0)
    """How late a missed due time may still run: when no server was up at a due time (or the
    schedule's previous job still ran), only the latest missed due time runs, and only if it
    is at most this many seconds old. 0 never runs a missed due time."""

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, value: str) -> str:
        from croniter import croniter

        if len(value.split()) != 5 or not croniter.is_valid(value):
            raise ValueError(
                _(
                    "{value} is not a five-field cron expression; write e.g. `0 2 * * *` "
                    "(minute hour day-of-month month day-of-week)"
                ).format(value=repr(value))
            )
        return value

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                _("{value} is not an IANA time zone; write e.g. `UTC` or `Asia/Shanghai`").format(
                    value=repr(value)
                )
            ) from None
        return value

    @model_validator(mode="after")
    def _one_job(self) -> ScheduleConfig:
        jobs = [bool(self.tier), bool(self.suites), self.report is not None]
        if sum(jobs) != 1:
            raise ValueError(
                _(
                    "schedule {name} must name exactly one of `tier:`, `suites:` or `report: daily`"
                ).format(name=repr(self.name))
            )
        if self.report is not None and self.agent is not None:
            raise ValueError(
                _(
                    "schedule {name} sends the daily report, which runs no agent; remove `agent:`"
                ).format(name=repr(self.name))
            )
        return self

    @property
    def job(self) -> str:
        """What the schedule does, in words: ``tier pr``, ``suites a.yaml``, ``report daily``."""
        if self.tier:
            return f"tier {self.tier}"
        if self.suites:
            return f"suites {', '.join(self.suites)}"
        return f"report {self.report}"

    def next_after(self, moment: datetime) -> datetime:
        """The first time after ``moment`` (aware) that the schedule is due, in its time zone."""
        from zoneinfo import ZoneInfo

        from croniter import croniter

        local = moment.astimezone(ZoneInfo(self.timezone))
        due: datetime = croniter(self.cron, local).get_next(datetime)
        return due

    def shown(self, moment: datetime | float) -> str:
        """A moment (aware, or Unix seconds) as ``YYYY-MM-DD HH:MM ZONE`` in the schedule's
        time zone: how due times are said."""
        from datetime import UTC
        from zoneinfo import ZoneInfo

        if not isinstance(moment, datetime):
            moment = datetime.fromtimestamp(moment, UTC)
        return f"{moment.astimezone(ZoneInfo(self.timezone)):%Y-%m-%d %H:%M} {self.timezone}"

    def last_due(self, moment: datetime) -> datetime:
        """The latest time at or before ``moment`` (aware) that the schedule was due, in its
        time zone."""
        from datetime import timedelta
        from zoneinfo import ZoneInfo

        from croniter import croniter

        # croniter's get_prev is strictly before its start: start a microsecond later so a
        # due time equal to ``moment`` counts.
        local = moment.astimezone(ZoneInfo(self.timezone)) + timedelta(microseconds=1)
        due: datetime = croniter(self.cron, local).get_prev(datetime)
        return due
