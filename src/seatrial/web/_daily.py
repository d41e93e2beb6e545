"""The daily report page: the day's runs, new failures, clusters, cost.

``/daily?date=YYYY-MM-DD`` (default today, in the server's time zone) shows the same report
as ``seatrial report daily``: the body is :func:`seatrial.report.daily_html_body`, which escapes
every stored value, so the page and the file never disagree.
"""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from seatrial.report import daily_html_body, daily_report
from seatrial.web._deps import render, store_of

router = APIRouter()


@router.get("/daily", response_class=HTMLResponse, include_in_schema=False)
def daily_page(request: Request, date: str | None = None) -> HTMLResponse:
    """The daily report of ``date`` (YYYY-MM-DD); a date that is not one is answered 400."""
    today = dt.date.today()
    if date:
        try:
            day = dt.date.fromisoformat(date)
        except ValueError:
            response = render(
                request,
                "daily.html",
                day=None,
                date=date,
                body=None,
                error=f"{date!r} is not a date: write it as YYYY-MM-DD, e.g. {today}.",
            )
            response.status_code = 400
            return response
    else:
        day = today
    report = daily_report(store_of(request), day)
    # Markup: the fragment is built with every value escaped (daily_html_body).
    body = Markup(daily_html_body(report, links=True))
    return render(
        request,
        "daily.html",
        day=day,
        date=day.isoformat(),
        body=body,
        error=None,
        previous=(day - dt.timedelta(days=1)).isoformat(),
        following=(day + dt.timedelta(days=1)).isoformat(),
    )
