"""Production traces: the list of ingested sessions, one as a timeline, "make a case".

``/traces`` lists the stored traces newest first, filtered by time, service (the agent), tool,
error and a failed check; ``/traces/{id}`` shows one as the attempt page's timeline, with the
checks run over it (reasons in the reader's language, a failed check's span marked on the
timeline) and what was masked, and a form that turns it into a pending case
(``POST /traces/{id}/case``, approved on ``/pending``) or downloads the proposed case file
(``/traces/{id}/case.yaml``). Their JSON twins are ``/api/traces`` and ``/api/traces/{id}``.

Everything shown was masked before it was stored; this module reads the store only.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import BaseModel

from seatrial.dataset import TraceFilter, agent_replies, case_from_trace, cases_file_text
from seatrial.errors import InputError
from seatrial.i18n import N_
from seatrial.store import PendingCase, Store, TraceHead
from seatrial.trace import Trace
from seatrial.web._deps import PAGE_SIZE, PageNumber, render, store_of
from seatrial.web._missing import not_found
from seatrial.web._timeline import build_timeline, failed_by_span, failed_checks, ms

router = APIRouter()

PENDING_KIND = "from_trace"
"""The ``kind`` of a pending case made from a trace."""
ERROR_CHOICES = (("", N_("any")), ("yes", N_("with an error")), ("no", N_("without error")))
"""The error filter's values and how each reads (translated where shown)."""

Text = Annotated[str, Query()]


def _filter(
    since: Text = "",
    until: Text = "",
    service: Text = "",
    tool: Text = "",
    error: Text = "",
    failed_check: Text = "",
) -> TraceFilter:
    """The list's filters from the query string (times: a day, a minute, or ``24h`` ago)."""
    return TraceFilter(since, until, service, tool, error, failed_check)


Filter = Annotated[TraceFilter, Depends(_filter)]
Page = PageNumber


class TracesPage(BaseModel):
    """One page of the production traces list."""

    page: int
    """The page number, from 1."""
    page_size: int
    """Traces per page."""
    has_next: bool
    """Whether an older page exists."""
    traces: list[TraceHead]
    """The traces, newest first."""


def _page(store: Store, chosen: TraceFilter, page: int) -> tuple[list[TraceHead], bool]:
    heads = store.trace_heads(chosen.query(limit=PAGE_SIZE + 1, offset=(page - 1) * PAGE_SIZE))
    return heads[:PAGE_SIZE], len(heads) > PAGE_SIZE


@router.get("/traces", response_class=HTMLResponse, include_in_schema=False)
def traces_list(request: Request, chosen: Filter, page: Page = 1) -> HTMLResponse:
    """Ingested sessions newest first, with filters and paging."""
    store = store_of(request)
    context: dict[str, Any] = {
        "filters": chosen,
        "errors": ERROR_CHOICES,
        "check_ids": store.trace_check_ids(),
        "page": page,
    }
    try:
        rows, has_next = _page(store, chosen, page)
    except InputError as exc:
        response = render(request, "traces.html", error=str(exc), rows=[], **context)
        response.status_code = 400
        return response
    params = chosen.params()
    return render(
        request,
        "traces.html",
        error=None,
        rows=rows,
        previous=f"/traces?{urlencode({**params, 'page': page - 1})}" if page > 1 else None,
        next=f"/traces?{urlencode({**params, 'page': page + 1})}" if has_next else None,
        **context,
    )


@router.get("/api/traces", tags=["traces"])
def api_traces(request: Request, chosen: Filter, page: Page = 1) -> TracesPage:
    """Stored production traces, newest first, one page, filtered as ``/traces`` is."""
    try:
        rows, has_next = _page(store_of(request), chosen, page)
    except InputError as exc:
        raise HTTPException(400, str(exc)) from None
    return TracesPage(page=page, page_size=PAGE_SIZE, has_next=has_next, traces=rows)


def _load(store: Store, trace_id: str) -> tuple[TraceHead, Trace]:
    return store.trace_head(trace_id), store.ingested_trace(trace_id)


@router.get("/traces/{trace_id}", response_class=HTMLResponse, include_in_schema=False)
def trace_page(request: Request, trace_id: str) -> HTMLResponse:
    """One trace: summary, the agent's replies, checks, masked values, its timeline, and
    "make a case"."""
    try:
        head, trace = _load(store_of(request), trace_id)
    except InputError as error:
        return not_found(request, str(error))
    problem = None
    try:
        proposed = case_from_trace(trace)
    except InputError as error:
        proposed, problem = None, str(error)
    timeline = build_timeline(trace)
    failed = failed_checks(head.checks, timeline)
    return render(
        request,
        "trace.html",
        head=head,
        replies=agent_replies(trace),
        timeline=timeline,
        failed={check.assertion_id: check for check in failed},
        failed_by=failed_by_span(failed),
        proposed=proposed,
        problem=problem,
        ms=ms,
    )


@router.get("/api/traces/{trace_id}", tags=["traces"])
def api_trace(request: Request, trace_id: str) -> dict[str, Any]:
    """One stored trace: its summary (checks, masked counts) and its spans in start order."""
    try:
        head, trace = _load(store_of(request), trace_id)
    except InputError as error:
        raise HTTPException(404, str(error)) from None
    timeline = build_timeline(trace)
    return {
        "head": head.model_dump(mode="json"),
        "resource": trace.resource,
        "spans": [row.span.model_dump(mode="json") for row in timeline.rows],
        "summary": timeline.summary,
    }


@router.get("/traces/{trace_id}/case.yaml", include_in_schema=False)
def case_file(request: Request, trace_id: str) -> Response:
    """The proposed case as a suite file, to save and run with ``seatrial run``."""
    try:
        proposed = case_from_trace(store_of(request).ingested_trace(trace_id))
    except InputError as error:
        raise HTTPException(404, str(error)) from None
    name = quote(f"{proposed.case.id}.yaml")
    return PlainTextResponse(
        cases_file_text([proposed], proposed.case.id),
        media_type="application/yaml",
        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{name}"},
    )


@router.post("/traces/{trace_id}/case", include_in_schema=False)
def make_case(
    request: Request,
    trace_id: str,
    dataset: Annotated[str, Form()] = "",
) -> Response:
    """Store the proposed case as pending (approved on ``/pending``) and go there."""
    store = store_of(request)
    try:
        proposed = case_from_trace(store.ingested_trace(trace_id))
    except InputError as error:
        return not_found(request, str(error))
    pending = PendingCase(
        dataset=dataset.strip(),
        case=proposed.case,
        origin="trace",
        kind=PENDING_KIND,
        proposals=[p.as_dict() for p in proposed.proposals],
    )
    store.add_pending([pending])
    return RedirectResponse(f"/pending?{urlencode({'made': pending.id})}", status_code=303)
