"""The review queue (label judge verdicts in the browser) and the judge calibration page.

Labels go through ``Store.label_review_item``, exactly as ``seatrial review`` stores them, with
who labelled (the form's ``who``, else the user ``seatrial serve`` was started for). The browser
remembers who labelled last (a cookie), so a reviewer types their name once.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote, unquote, urlencode

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from seatrial.dataset import judge_brief
from seatrial.errors import InputError
from seatrial.store import ReviewItem, label_counts, next_open_review_id, open_review_count
from seatrial.web._board_judging import (
    LABELS,
    STATUSES,
    CalibrationView,
    ReviewPage,
    calibration_chart,
    queue_page,
)
from seatrial.web._deps import PAGE_SIZE, render, store_of

router = APIRouter()

REVIEWER_COOKIE = "seatrial_reviewer"
"""Who labelled last in this browser (URL-encoded: a name may be Chinese)."""
REVIEWER_DAYS = 365
"""How long the browser remembers the reviewer."""


def _reviewer(request: Request, form: dict[str, str] | None) -> str:
    """Who the form offers: what was just typed, else who labelled last here, else the user
    the dashboard was started for."""
    typed = (form or {}).get("who")
    remembered = unquote(request.cookies.get(REVIEWER_COOKIE, ""))
    return typed or remembered or str(request.app.state.user or "")


def _status(status: str) -> str:
    if status not in STATUSES:
        raise HTTPException(
            status_code=400, detail=f"status is one of {', '.join(STATUSES)}, not {status!r}"
        )
    return status


def _item_page(
    request: Request,
    item: ReviewItem | None,
    *,
    error: str | None = None,
    status_code: int = 200,
    form: dict[str, str] | None = None,
) -> HTMLResponse:
    response = render(
        request,
        "review_item.html",
        item=item,
        brief=judge_brief(store_of(request), item) if item is not None else None,
        error=error,
        done=dict(request.query_params),
        who=_reviewer(request, form),
        form=form or {},
        labels=LABELS,
    )
    response.status_code = status_code
    return response


@router.get("/review", response_class=HTMLResponse, include_in_schema=False)
def review_page(request: Request, status: str = "open", page: int = 1) -> HTMLResponse:
    """The queue: items waiting for a person's label (or labelled ones, or all)."""
    error = None
    if status not in STATUSES:
        error, status = f"status is one of {', '.join(STATUSES)}, not {status!r}", "open"
    found = queue_page(store_of(request), status, page, PAGE_SIZE)
    response = render(
        request,
        "review.html",
        queue=found,
        statuses=STATUSES,
        done=dict(request.query_params),
        error=error,
    )
    response.status_code = 400 if error else 200
    return response


@router.get("/api/review", tags=["review"])
def review_api(request: Request, status: str = "open", page: int = 1) -> ReviewPage:
    """A page of review items, oldest first, filtered by status (open, labelled, all)."""
    return queue_page(store_of(request), _status(status), page, PAGE_SIZE)


@router.get("/review/{item_id}", response_class=HTMLResponse, include_in_schema=False)
def review_item_page(request: Request, item_id: str) -> HTMLResponse:
    """One item: the input, the reply, the judge's verdict, and the label form."""
    try:
        item = store_of(request).review_item(item_id)
    except InputError as exc:
        return _item_page(request, None, error=str(exc), status_code=404)
    return _item_page(request, item)


@router.post("/review/{item_id}", include_in_schema=False)
def label_item(
    request: Request,
    item_id: str,
    label: Annotated[str, Form()] = "",
    who: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
    failure_type: Annotated[str, Form()] = "",
) -> Response:
    """Store a person's label (pass/fail) or skip; then go to the next open item."""
    store = store_of(request)
    try:
        item = store.review_item(item_id)
    except InputError as exc:
        return _item_page(request, None, error=str(exc), status_code=404)
    if item.id != item_id:
        # A label is written only to the item the form was shown for, named in full.
        error = f"label the item by its full id ({item.id}), not a prefix of it"
        return _item_page(request, None, error=error, status_code=404)
    verdict = label.strip().lower()
    person = who.strip() or str(request.app.state.user or "")
    form = {"label": verdict, "who": who, "note": note, "failure_type": failure_type}
    if verdict not in LABELS:
        error = f"label must be one of {', '.join(LABELS)}, not {label!r}"
        return _item_page(request, item, error=error, status_code=400, form=form)
    if verdict != "skip":
        if not person:
            error = "say who labels the item: fill in who"
            return _item_page(request, item, error=error, status_code=400, form=form)
        store.label_review_item(
            item.id,
            "pass" if verdict == "pass" else "fail",
            failure_type.strip() or None,
            note.strip(),
            person,
        )
        done = {"labelled": item.id, "label": verdict, "who": person}
    else:
        done = {"skipped": item.id}
    following = next_open_review_id(store, item)
    target = f"/review/{following}" if following else "/review"
    response = RedirectResponse(f"{target}?{urlencode(done)}", status_code=303)
    if verdict != "skip":
        response.set_cookie(
            REVIEWER_COOKIE,
            quote(person),
            max_age=REVIEWER_DAYS * 24 * 3600,
            httponly=True,
            samesite="strict",
        )
    return response


@router.get("/calibration", response_class=HTMLResponse, include_in_schema=False)
def calibration_page(request: Request) -> HTMLResponse:
    """Agreement and Cohen's kappa per judge model and prompt, over time."""
    view = _calibrations(request)
    return render(
        request,
        "calibration.html",
        view=view,
        chart=calibration_chart(view.calibrations),
        open_items=open_review_count(store_of(request)),
    )


@router.get("/api/calibrations", tags=["review"])
def calibrations_api(request: Request) -> CalibrationView:
    """Every judge calibration, newest first, and the human labels stored per source."""
    return _calibrations(request)


def _calibrations(request: Request) -> CalibrationView:
    store = store_of(request)
    return CalibrationView(calibrations=store.calibrations(), labels=label_counts(store))
