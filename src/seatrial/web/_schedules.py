"""The schedules of seatrial.yaml: each one's next due time and its last claimed run.

``/schedules`` is the page, ``GET /api/schedules`` its JSON twin. The next due time comes
from the schedule itself (:meth:`seatrial.config.ScheduleConfig.next_after`), the last run
from the store (:func:`seatrial.store.latest_schedule_runs`), as ``seatrial schedules`` shows
them. The dashboard only reads: whether this server runs the schedules is said, not changed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from seatrial.store import ScheduleRun, ScheduleStatus, latest_schedule_runs
from seatrial.web._deps import render, store_of

if TYPE_CHECKING:
    from seatrial.config import ScheduleConfig

router = APIRouter()


class ScheduleRunView(BaseModel):
    """A claimed due time of a schedule and how its job ended."""

    due_at: str
    """The due time, ISO 8601 with the schedule's UTC offset."""
    due: str
    """The due time as shown: ``YYYY-MM-DD HH:MM ZONE``."""
    status: ScheduleStatus
    """``running``, ``ok``, ``failed`` (a run did not meet its gates) or ``error``."""
    run_ids: list[str]
    error: str | None
    claimed_by: str
    """The server that ran it, ``host:pid``."""
    finished_at: str | None
    """ISO 8601 (UTC); None while running."""


class ScheduleView(BaseModel):
    """One schedule: what it runs, when next, and its last run."""

    name: str
    job: str
    """``tier NAME``, ``suites PATHS`` or ``report daily``."""
    cron: str
    timezone: str
    grace_s: float
    next_due_at: str
    """ISO 8601 with the schedule's UTC offset."""
    next_due: str
    """As shown: ``YYYY-MM-DD HH:MM ZONE``."""
    last: ScheduleRunView | None
    """The newest claimed due time; None before the first."""


class SchedulesView(BaseModel):
    """``GET /api/schedules``."""

    scheduling: bool
    """Whether this server runs the schedules (``seatrial serve`` without
    ``--no-schedules``); another server on the same store may."""
    schedules: list[ScheduleView]


def schedules_of(request: Request) -> tuple[Sequence[ScheduleConfig], bool]:
    """The schedules of the app's configuration, and whether this server runs them."""
    schedules: Sequence[ScheduleConfig] = request.app.state.schedules
    return schedules, bool(request.app.state.scheduling)


def schedules_view(request: Request) -> SchedulesView:
    """Each configured schedule with its next due time and its last run."""
    schedules, scheduling = schedules_of(request)
    latest = latest_schedule_runs(store_of(request)) if schedules else {}
    now = dt.datetime.now(dt.UTC)
    views = []
    for schedule in schedules:
        due = schedule.next_after(now)
        last = latest.get(schedule.name)
        views.append(
            ScheduleView(
                name=schedule.name,
                job=schedule.job,
                cron=schedule.cron,
                timezone=schedule.timezone,
                grace_s=schedule.grace_s,
                next_due_at=due.isoformat(),
                next_due=schedule.shown(due),
                last=None if last is None else _run_view(schedule, last),
            )
        )
    return SchedulesView(scheduling=scheduling, schedules=views)


def _run_view(schedule: ScheduleConfig, run: ScheduleRun) -> ScheduleRunView:
    finished = run.finished_at
    return ScheduleRunView(
        due_at=dt.datetime.fromtimestamp(run.due_at, ZoneInfo(schedule.timezone)).isoformat(),
        due=schedule.shown(run.due_at),
        status=run.status,
        run_ids=list(run.run_ids),
        error=run.error,
        claimed_by=run.claimed_by,
        finished_at=(
            None if finished is None else dt.datetime.fromtimestamp(finished, dt.UTC).isoformat()
        ),
    )


@router.get("/api/schedules", tags=["schedules"])
def api_schedules(request: Request) -> SchedulesView:
    """The schedules of seatrial.yaml, each with its next due time and its last run."""
    return schedules_view(request)


@router.get("/schedules", response_class=HTMLResponse, include_in_schema=False)
def schedules_page(request: Request) -> HTMLResponse:
    """The schedules as a table."""
    return render(request, "schedules.html", view=schedules_view(request))
