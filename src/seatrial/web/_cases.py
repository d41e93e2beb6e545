"""The case page (every repeat side by side) and the attempt page (its trace as a timeline).

Both read one case of one run: its definition, its attempts without traces, and for the attempt
page the single trace it shows. Their JSON twins live under ``/api/runs/...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from seatrial.case import Case
from seatrial.compare import Step, resolve_run_ref, steps_of
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AssertionResult, AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.trace import Trace
from seatrial.web._deps import AttemptNumber, render, store_of
from seatrial.web._missing import not_found
from seatrial.web._timeline import (
    build_timeline,
    failed_by_span,
    failed_checks,
    ms,
    pretty_json,
)

router = APIRouter()

OTHER_RUNS = 20
"""Runs of the same suite offered to compare a case with."""


@dataclass(frozen=True)
class CaseView:
    """One case of one run: its definition (None when the run did not list it) and attempts."""

    run: RunInfo
    case_id: str
    case: Case | None
    records: list[AttemptRecord]

    def assertion_ids(self) -> list[str]:
        """Every assertion id any attempt reported, in first-seen order."""
        seen: dict[str, None] = {}
        for record in self.records:
            for result in record.assertions:
                seen.setdefault(result.id, None)
        return list(seen)

    def results(self) -> list[dict[str, AssertionResult]]:
        """Per attempt, its assertion results by id."""
        return [{r.id: r for r in record.assertions} for record in self.records]


def load_case(store: Store, run_ref: str, case_id: str) -> CaseView:
    """The case ``case_id`` of the run ``run_ref`` names; :class:`InputError` when unknown."""
    run_id = resolve_run_ref(store, run_ref)
    info = store.get_run(run_id)
    case = next((c for c in store.run_cases(run_id) if c.id == case_id), None)
    records = store.attempts(run_id, case_id)
    if case is None and not records:
        raise InputError(
            _("run {run} has no case {case}; its run page /runs/{run} lists its cases").format(
                run=run_id, case=repr(case_id)
            )
        )
    return CaseView(run=info, case_id=case_id, case=case, records=records)


def _responses(record: AttemptRecord) -> list[str]:
    if record.responses:
        return list(record.responses)
    return [record.response] if record.response else []


@dataclass(frozen=True)
class AttemptView:
    """One attempt: its case, its record, its trace (None when never recorded) and steps."""

    view: CaseView
    record: AttemptRecord
    trace: Trace | None
    trace_note: str
    steps: list[Step]


def load_attempt_view(store: Store, run_ref: str, case_id: str, attempt: int) -> AttemptView:
    """Attempt ``attempt`` of a case with its trace; :class:`InputError` when unknown."""
    view = load_case(store, run_ref, case_id)
    record = next((r for r in view.records if r.attempt == attempt), None)
    if record is None:
        stored = ", ".join(str(r.attempt) for r in view.records) or _("none")
        raise InputError(
            _("case {case} of run {run} has no attempt {attempt} (stored: {stored})").format(
                case=repr(case_id), run=view.run.run_id, attempt=attempt, stored=stored
            )
        )
    trace: Trace | None = None
    note = ""
    try:
        trace = store.attempt_trace(view.run.run_id, case_id, attempt)
    except InputError as error:  # the agent was never reached: no trace
        note = str(error)
    steps = steps_of(trace, _responses(record))
    return AttemptView(view=view, record=record, trace=trace, trace_note=note, steps=steps)


def _record_dict(record: AttemptRecord) -> dict[str, Any]:
    data: dict[str, Any] = record.model_dump(mode="json", exclude={"trace"})
    return data


def _other_runs(store: Store, run: RunInfo) -> list[RunInfo]:
    return [r for r in store.list_runs(limit=OTHER_RUNS, suite=run.suite) if r.run_id != run.run_id]


@router.get("/runs/{run_id}/cases/{case_id}", response_class=HTMLResponse, include_in_schema=False)
def case_page(request: Request, run_id: str, case_id: str) -> HTMLResponse:
    """Every repeat of one case side by side, with its definition and assertions."""
    store = store_of(request)
    try:
        view = load_case(store, run_id, case_id)
    except InputError as error:
        return not_found(request, str(error))
    others = _other_runs(store, view.run)
    earlier = [r for r in others if r.started_at <= view.run.started_at]
    return render(
        request,
        "case.html",
        view=view,
        run=view.run,
        case=view.case,
        records=view.records,
        assertion_ids=view.assertion_ids(),
        results=view.results(),
        others=others,
        previous=earlier[0] if earlier else None,
        ms=ms,
    )


@router.get("/api/runs/{run_id}/cases/{case_id}")
def case_api(request: Request, run_id: str, case_id: str) -> dict[str, Any]:
    """One case of a run: its definition as run and every attempt (without traces)."""
    try:
        view = load_case(store_of(request), run_id, case_id)
    except InputError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    return {
        "run_id": view.run.run_id,
        "case_id": view.case_id,
        "case": view.case.model_dump(mode="json", exclude_defaults=True) if view.case else None,
        "attempts": [_record_dict(r) for r in view.records],
    }


@router.get(
    "/runs/{run_id}/cases/{case_id}/{attempt}",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def attempt_page(
    request: Request, run_id: str, case_id: str, attempt: AttemptNumber
) -> HTMLResponse:
    """One attempt: header, step summary, the trace timeline and the steps."""
    try:
        found = load_attempt_view(store_of(request), run_id, case_id, attempt)
    except InputError as error:
        return not_found(request, str(error))
    snapshot = (
        found.record.snapshot.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
        if found.record.snapshot is not None
        else {}
    )
    timeline = build_timeline(found.trace)
    failed = failed_checks(found.record.assertions, timeline)
    return render(
        request,
        "attempt.html",
        run=found.view.run,
        case=found.view.case,
        case_id=case_id,
        record=found.record,
        attempts=[r.attempt for r in found.view.records],
        timeline=timeline,
        failed=failed,
        failed_by=failed_by_span(failed),
        trace_note=found.trace_note,
        steps=found.steps,
        snapshot=snapshot,
        replies=found.record.responses or [found.record.response],
        final_state=pretty_json(found.record.final_state),
        ms=ms,
    )


@router.get("/api/runs/{run_id}/cases/{case_id}/{attempt}")
def attempt_api(
    request: Request, run_id: str, case_id: str, attempt: AttemptNumber
) -> dict[str, Any]:
    """One attempt: its record, its spans in start order, and its steps."""
    try:
        found = load_attempt_view(store_of(request), run_id, case_id, attempt)
    except InputError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    timeline = build_timeline(found.trace)
    return {
        "run_id": found.view.run.run_id,
        "case_id": case_id,
        "attempt": attempt,
        "record": _record_dict(found.record),
        "trace_id": found.trace.trace_id if found.trace is not None else None,
        "spans": [row.span.model_dump(mode="json") for row in timeline.rows],
        "summary": timeline.summary,
        "steps": [s.as_dict() for s in found.steps],
    }
