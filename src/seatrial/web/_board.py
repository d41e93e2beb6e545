"""The leaderboard and coverage pages, and their JSON under ``/api/``.

The leaderboard ranks, for one suite, each agent's newest finished run, or the runs of one
benchmark (``?bench=ID``, ``/api/bench/{bench_id}``); coverage shows which
tools and skills one run's cases exercised and which named tools none did. Both read only the
runs they show, with aggregate SQL (see ``_board_leaderboard`` and ``_board_coverage``).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from seatrial.compare import REPLAY_TAG, resolve_run_ref
from seatrial.errors import RunNotFound
from seatrial.store import newest_run_of_suite, newest_suite, suite_names, suite_of_run
from seatrial.web._board_coverage import Coverage, coverage
from seatrial.web._board_leaderboard import SuiteBoard, bench_board, leaderboard
from seatrial.web._deps import render, store_of

router = APIRouter()


def _leaderboard(request: Request, suite: str | None, bench: str | None = None) -> SuiteBoard:
    """The board of benchmark ``bench`` (RunNotFound when unknown), else of ``suite``."""
    store = store_of(request)
    every = suite_names(store)
    if bench:
        return bench_board(store, bench, every)
    chosen = suite or newest_suite(store)
    return leaderboard(store, chosen, every)


def _coverage(request: Request, suite: str | None, run: str | None) -> Coverage:
    """Coverage of run ``run`` (a reference), else of the newest run of ``suite``.

    RunNotFound when ``run`` names no run.
    """
    store = store_of(request)
    every = suite_names(store)
    if run:
        run_id: str | None = resolve_run_ref(store, run, suite=suite)
        chosen = suite_of_run(store, run_id) if run_id else suite
    else:
        chosen = suite or newest_suite(store)
        run_id = newest_run_of_suite(store, chosen, skip_tag=REPLAY_TAG) if chosen else None
    if run_id is None:
        return Coverage(suite=chosen, suites=every)
    found = coverage(store, run_id, store.run_cases(run_id))
    return found.model_copy(update={"suite": chosen, "suites": every})


@router.get("/leaderboard", response_class=HTMLResponse, include_in_schema=False)
def leaderboard_page(
    request: Request, suite: str | None = None, bench: str | None = None
) -> HTMLResponse:
    """One suite (or one benchmark), one row per agent: success, pass^k, latency, tokens,
    cost, tool success, failure types, and the differences that are significant."""
    try:
        board = _leaderboard(request, suite, bench)
    except RunNotFound as exc:
        response = render(
            request, "leaderboard.html", board=SuiteBoard(suite=None), chart={}, error=str(exc)
        )
        response.status_code = 404
        return response
    chart = {
        "agents": [e.agent for e in board.entries],
        "success": [round(e.success["estimate"] * 100, 2) for e in board.entries],
        "low": [round(e.success["low"] * 100, 2) for e in board.entries],
        "high": [round(e.success["high"] * 100, 2) for e in board.entries],
    }
    return render(request, "leaderboard.html", board=board, chart=chart, error=None)


@router.get("/api/leaderboard", tags=["boards"])
def leaderboard_api(request: Request, suite: str | None = None) -> SuiteBoard:
    """The leaderboard of ``suite`` (default: the suite of the newest run)."""
    return _leaderboard(request, suite)


@router.get("/api/bench/{bench_id}", tags=["boards"])
def bench_api(request: Request, bench_id: str) -> SuiteBoard:
    """The leaderboard of benchmark ``bench_id`` (``seatrial bench``): its runs, ranked,
    with the significant differences named."""
    try:
        return _leaderboard(request, None, bench_id)
    except RunNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc


@router.get("/coverage", response_class=HTMLResponse, include_in_schema=False)
def coverage_page(
    request: Request, suite: str | None = None, run: str | None = None
) -> HTMLResponse:
    """Tools and skills x cases x verdicts of one run, and the named tools none called."""
    try:
        found = _coverage(request, suite, run)
    except RunNotFound as exc:
        response = render(
            request, "coverage.html", cov=Coverage(suite=suite), error=str(exc), run_ref=run
        )
        response.status_code = 404
        return response
    tool_names = [t.name for t in found.tools]
    return render(request, "coverage.html", cov=found, error=None, run_ref=run, names=tool_names)


@router.get("/api/coverage", tags=["boards"])
def coverage_api(request: Request, suite: str | None = None, run: str | None = None) -> Coverage:
    """Coverage of run ``run`` (id, prefix, tag, ``latest``), else of ``suite``'s newest run."""
    try:
        return _coverage(request, suite, run)
    except RunNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
