"""Generated cases waiting for a person: approve into a golden set, or reject.

``/pending`` lists the pending cases (variants from ``seatrial cases expand``, cases made from
production traces) with their user turns and assertions; a person ticks some and approves
them into one new version of a golden set, or rejects them with a reason. A case made from a
trace shows each proposed assertion with a keep box: approving keeps the ticked ones. Since a
pending case is never edited, a changed choice is stored as a new pending case (the old one
rejected as replaced by it) and that one is approved, so the record shows what was proposed
and what was kept; the store does this, and checks every approval rule, in one transaction
(``Store.approve_pending``), so a refused approval changes nothing.

Who decides is the form's ``who``, else the user ``seatrial serve`` was started for. The
JSON twins are ``GET /api/pending``, ``POST /api/pending/approve`` and
``POST /api/pending/reject``. This module calls store methods only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.store import PENDING_STATUSES, PendingCase, Store
from seatrial.web._deps import render, store_of

router = APIRouter()

STATUS_CHOICES = (*PENDING_STATUSES, "all")
KEEP_FIELD = "keep-"
"""Form fields ``keep-{pending id}`` carry the indexes of the proposals ticked to keep."""


class ApproveRequest(BaseModel):
    """``POST /api/pending/approve``: which pending cases join which golden set."""

    ids: list[str] = Field(min_length=1)
    """Pending case ids (whole)."""
    dataset: str | None = None
    """The golden set; default the one the cases name."""
    who: str = ""
    """Who approves; default the user the dashboard was started for."""
    note: str = ""
    """Why, kept with the new version."""


class RejectRequest(BaseModel):
    """``POST /api/pending/reject``: which pending cases are dropped, and why."""

    ids: list[str] = Field(min_length=1)
    """Pending case ids (whole)."""
    reason: str = Field(min_length=1)
    """Why they are rejected."""
    who: str = ""
    """Who rejects; default the user the dashboard was started for."""


class Approved(BaseModel):
    """The answer to an approval."""

    dataset: str
    """The golden set the cases joined."""
    version: int
    """The new version holding them."""
    approved: list[str]
    """The pending ids approved (a changed choice of proposals: the replacement's id)."""


def _status(status: str) -> str:
    if status not in STATUS_CHOICES:
        raise InputError(
            _("status is one of {choices}, not {status}").format(
                choices=", ".join(STATUS_CHOICES), status=repr(status)
            )
        )
    return status


def _listed(store: Store, status: str, dataset: str) -> list[PendingCase]:
    return store.pending_cases(status=None if status == "all" else status, dataset=dataset or None)


def _page(
    request: Request,
    *,
    status: str = "pending",
    dataset: str = "",
    error: str | None = None,
    form: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    store = store_of(request)
    response = render(
        request,
        "pending.html",
        items=_listed(store, status, dataset),
        statuses=STATUS_CHOICES,
        status=status,
        dataset=dataset,
        datasets=store.golden_names(),
        done=dict(request.query_params),
        error=error,
        form=form or {},
        who=(form or {}).get("who") or request.app.state.user,
        keep_field=KEEP_FIELD,
    )
    response.status_code = status_code
    return response


@router.get("/pending", response_class=HTMLResponse, include_in_schema=False)
def pending_page(request: Request, status: str = "pending", dataset: str = "") -> HTMLResponse:
    """Pending cases oldest first, with the approve and reject form."""
    try:
        return _page(request, status=_status(status), dataset=dataset)
    except InputError as exc:
        return _page(request, error=str(exc), status_code=400)


@router.post("/pending", include_in_schema=False)
async def decide(request: Request) -> Response:
    """Approve the ticked cases into a golden set (keeping the ticked proposals), or reject
    them with a reason; then back to the list."""
    fields = await request.form()
    ids = [str(value) for value in fields.getlist("ids")]
    action = str(fields.get("action", ""))
    form = {key: str(fields.get(key, "")).strip() for key in ("dataset", "who", "note", "reason")}
    person = form["who"] or str(request.app.state.user or "")
    keep = {
        key.removeprefix(KEEP_FIELD): {int(str(v)) for v in fields.getlist(key) if str(v).isdigit()}
        for key in fields
        if key.startswith(KEEP_FIELD)
    }
    store = store_of(request)
    try:
        if not ids:
            raise InputError(_("tick at least one case to approve or reject"))
        if action == "approve":
            dataset = form["dataset"] or None
            # A trace case's boxes all unticked sends no field: it keeps no proposal.
            kept = {pending_id: keep.get(pending_id, set()) for pending_id in ids}
            version = store.approve_pending(
                ids, who=person, dataset=dataset, note=form["note"], kept=kept
            )
            target = dataset or store.pending_case(ids[0]).dataset
            done = {"approved": len(ids), "dataset": target, "version": version}
        elif action == "reject":
            store.reject_pending(ids, who=person, reason=form["reason"])
            done = {"rejected": len(ids), "reason": form["reason"]}
        else:
            raise InputError(
                _("action is approve or reject, not {action}").format(action=repr(action))
            )
    except InputError as exc:
        return _page(request, error=str(exc), form={**form, "ids": ids}, status_code=400)
    return RedirectResponse(f"/pending?{urlencode(done)}", status_code=303)


@router.get("/api/pending", tags=["datasets"])
def pending_api(request: Request, status: str = "pending", dataset: str = "") -> list[PendingCase]:
    """Pending cases oldest first, of one status (pending, approved, rejected, all)."""
    try:
        return _listed(store_of(request), _status(status), dataset)
    except InputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


@router.get("/api/pending/{pending_id}", tags=["datasets"])
def pending_case_api(request: Request, pending_id: str) -> PendingCase:
    """One pending case, whatever its status."""
    try:
        return store_of(request).pending_case(pending_id)
    except InputError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.post("/api/pending/approve", tags=["datasets"])
def approve_api(request: Request, body: ApproveRequest) -> Approved:
    """Approve pending cases into one new version of a golden set (their proposals as
    stored)."""
    store = store_of(request)
    who = body.who or str(request.app.state.user or "")
    try:
        version = store.approve_pending(body.ids, who=who, dataset=body.dataset, note=body.note)
        target = body.dataset or store.pending_case(body.ids[0]).dataset
    except InputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    return Approved(dataset=target, version=version, approved=body.ids)


@router.post("/api/pending/reject", tags=["datasets"])
def reject_api(request: Request, body: RejectRequest) -> list[PendingCase]:
    """Reject pending cases with a reason; returns them as now stored."""
    store = store_of(request)
    who = body.who or str(request.app.state.user or "")
    try:
        store.reject_pending(body.ids, who=who, reason=body.reason)
        return [store.pending_case(pending_id) for pending_id in body.ids]
    except InputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
