"""The Runs and Run pages and their JSON: ``/``, ``/runs``, ``/runs/{run}``, ``/api/runs``,
``/api/trends``, ``/api/runs/{run}``."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from seatrial.compare import resolve_run_ref
from seatrial.errors import InputError, RunNotFound
from seatrial.report import to_json
from seatrial.web._deps import PAGE_SIZE, PageNumber, render, store_of
from seatrial.web._runs_models import RunsPage, Trends
from seatrial.web._runs_queries import TREND_RUNS, RunFilter, runs_page, trend
from seatrial.web._runs_view import VERDICTS, cached_report, run_view

router = APIRouter()

Text = Annotated[str | None, Query()]
Page = PageNumber


def _filter(
    suite: Text = None,
    agent: Text = None,
    tag: Text = None,
    since: Text = None,
    until: Text = None,
) -> RunFilter:
    """The list's filters from the query string (since/until: ``YYYY-MM-DD``, UTC)."""
    return RunFilter(
        suite=suite or None, agent=agent or None, tag=tag or None, since=since, until=until
    )


Filter = Annotated[RunFilter, Depends(_filter)]


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    """The dashboard opens on the runs list."""
    return RedirectResponse("/runs", status_code=307)


@router.get("/runs", response_class=HTMLResponse, include_in_schema=False)
def runs_list(
    request: Request,
    run_filter: Filter,
    page: Page = 1,
) -> HTMLResponse:
    """Runs newest first with filters, pass rate with interval, gate status, cost; the trend."""
    store = store_of(request)
    try:
        rows, has_next = runs_page(store, request.app.state, run_filter, page, PAGE_SIZE)
    except InputError as exc:
        response = render(request, "runs.html", error=str(exc), filters=run_filter, rows=[])
        response.status_code = 400
        return response
    params = run_filter.params()
    return render(
        request,
        "runs.html",
        error=None,
        filters=run_filter,
        rows=rows,
        page=page,
        previous=f"/runs?{urlencode({**params, 'page': page - 1})}" if page > 1 else None,
        next=f"/runs?{urlencode({**params, 'page': page + 1})}" if has_next else None,
        # The chart reads its figures from /api/trends after the page loads: the list answers
        # without waiting for 200 runs' aggregates, and each request stays well under 300 ms.
        trend_url=f"/api/trends?{urlencode(params)}" if params else "/api/trends",
        trend_runs=TREND_RUNS,
    )


@router.get("/api/runs", tags=["runs"])
def api_runs(
    request: Request,
    run_filter: Filter,
    page: Page = 1,
) -> RunsPage:
    """The runs list: one page, newest first, with pass rate interval, gate status and cost."""
    try:
        rows, has_next = runs_page(
            store_of(request), request.app.state, run_filter, page, PAGE_SIZE
        )
    except InputError as exc:
        raise HTTPException(400, str(exc)) from None
    return RunsPage(page=page, page_size=PAGE_SIZE, has_next=has_next, runs=rows)


@router.get("/api/trends", tags=["runs"])
def api_trends(
    request: Request,
    run_filter: Filter,
) -> Trends:
    """Pass rate, p95 wall time, tokens and cost per run: the newest 200 filtered, oldest first."""
    try:
        return Trends(runs=trend(store_of(request), request.app.state, run_filter))
    except InputError as exc:
        raise HTTPException(400, str(exc)) from None


@router.get("/runs/{run_ref}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, run_ref: str) -> HTMLResponse:
    """One run: summary, matrix, failures, slowest and costliest cases, gates, flaky, cases."""
    store = store_of(request)
    try:
        run_id = resolve_run_ref(store, run_ref)
    except (RunNotFound, InputError) as exc:
        response = render(request, "run.html", error=str(exc), view=None)
        response.status_code = 404 if isinstance(exc, RunNotFound) else 400
        return response
    view = run_view(store, cached_report(store, request.app.state, run_id))
    return render(request, "run.html", error=None, view=view, verdicts=VERDICTS)


@router.get("/api/runs/{run_ref}", tags=["runs"])
def api_run(request: Request, run_ref: str) -> dict[str, Any]:
    """One run's report, as ``report.json`` holds it (``seatrial report --format json``)."""
    store = store_of(request)
    try:
        run_id = resolve_run_ref(store, run_ref)
    except RunNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except InputError as exc:
        raise HTTPException(400, str(exc)) from None
    return to_json(cached_report(store, request.app.state, run_id))
