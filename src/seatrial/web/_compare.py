"""The compare pages: two runs (transitions, category deltas with intervals) and one case of
both (the two trajectories aligned, the first divergence highlighted), with their JSON twins.

Runs are named as ``seatrial compare`` names them: an id, a unique prefix, a tag, ``latest`` or
``latest-passing``. A comparison of two finished runs is kept in memory: finished runs never
change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from seatrial.compare import (
    TRANSITION_TITLES,
    TRANSITIONS,
    AttemptRef,
    Comparison,
    TraceDiff,
    change_text,
    compare_runs,
    diff_attempts,
    headline,
    load_attempt,
    metric_number,
    parse_attempt_ref,
    resolve_run_ref,
)
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord
from seatrial.store import Store
from seatrial.web._deps import AttemptChoice, render, store_of
from seatrial.web._missing import not_found

router = APIRouter()

RECENT_RUNS = 50
"""Runs offered in the compare form."""
CACHED = 64
"""Comparisons of finished runs kept in memory."""


def _comparison(request: Request, store: Store, base: str, cand: str) -> Comparison:
    base_id, cand_id = resolve_run_ref(store, base), resolve_run_ref(store, cand)
    cache: dict[tuple[str, str], Comparison] | None = getattr(
        request.app.state, "compare_cache", None
    )
    if cache is None:
        cache = {}
        request.app.state.compare_cache = cache
    key = (base_id, cand_id)
    if key in cache:
        return cache[key]
    comparison = compare_runs(store, base_id, cand_id)
    if comparison.base.info.status == "finished" and comparison.cand.info.status == "finished":
        if len(cache) >= CACHED:
            cache.pop(next(iter(cache)))
        cache[key] = comparison
    return comparison


@router.get("/compare", response_class=HTMLResponse, include_in_schema=False)
def compare_page(
    request: Request, base: str | None = None, cand: str | None = None
) -> HTMLResponse:
    """Two runs compared; without both runs named, a form to pick them."""
    store = store_of(request)
    if not base or not cand:
        return render(
            request,
            "compare.html",
            comparison=None,
            runs=store.list_runs(limit=RECENT_RUNS),
            base=base or "",
            cand=cand or "",
        )
    try:
        comparison = _comparison(request, store, base, cand)
    except InputError as error:
        return not_found(request, str(error))
    return render(
        request,
        "compare.html",
        comparison=comparison,
        headline=headline(comparison),
        groups=[
            (t, _(TRANSITION_TITLES[t]), comparison.of(t))
            for t in TRANSITIONS
            if t != "still_passing"
        ],
        still_passing_title=_(TRANSITION_TITLES["still_passing"]),
        still_passing=comparison.of("still_passing"),
        base_id=comparison.base.info.run_id,
        cand_id=comparison.cand.info.run_id,
        change_text=change_text,
        number=metric_number,
    )


@router.get("/api/compare")
def compare_api(request: Request, base: str = Query(...), cand: str = Query(...)) -> dict[str, Any]:
    """Two runs compared: transitions, per-category deltas with intervals, metrics."""
    try:
        comparison = _comparison(request, store_of(request), base, cand)
    except InputError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    data: dict[str, Any] = comparison.to_dict()
    data["headline"] = headline(comparison)
    return data


@dataclass(frozen=True)
class CaseDiff:
    """One case in two runs: which attempts, their records (with traces) and the diff."""

    a: AttemptRef
    b: AttemptRef
    record_a: AttemptRecord
    record_b: AttemptRecord
    diff: TraceDiff


def load_case_diff(
    store: Store, base: str, cand: str, case: str, a: int | None, b: int | None
) -> CaseDiff:
    """Resolve both attempts (default: each run's first non-passing one) and diff them."""
    ref_a = parse_attempt_ref(store, base, case=case, attempt=a)
    ref_b = parse_attempt_ref(store, cand, case=case, attempt=b)
    record_a, record_b = load_attempt(store, ref_a), load_attempt(store, ref_b)
    return CaseDiff(ref_a, ref_b, record_a, record_b, diff_attempts(record_a, record_b))


@router.get("/compare/case", response_class=HTMLResponse, include_in_schema=False)
def compare_case_page(
    request: Request,
    base: str = "",
    cand: str = "",
    case: str = "",
    a: AttemptChoice = None,
    b: AttemptChoice = None,
) -> HTMLResponse:
    """One case of two runs: both trajectories aligned, the first divergence marked."""
    if not (base and cand and case):
        return not_found(request, "name both runs and the case: /compare/case?base=&cand=&case=")
    store = store_of(request)
    try:
        found = load_case_diff(store, base, cand, case, a, b)
    except InputError as error:
        return not_found(request, str(error))
    diff = found.diff
    first = diff.first
    return render(
        request,
        "compare_case.html",
        found=found,
        diff=diff,
        first=first,
        led_from=first.row - len(first.led_to) if first is not None else 0,
        case_id=case,
        attempts_a=[r.attempt for r in store.attempts(found.a.run_id, case)],
        attempts_b=[r.attempt for r in store.attempts(found.b.run_id, case)],
    )


@router.get("/api/diff")
def diff_api(
    request: Request,
    base: str = Query(...),
    cand: str = Query(...),
    case: str = Query(...),
    a: AttemptChoice = None,
    b: AttemptChoice = None,
) -> dict[str, Any]:
    """One case of two runs aligned step by step, with the first divergence."""
    try:
        found = load_case_diff(store_of(request), base, cand, case, a, b)
    except InputError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    data: dict[str, Any] = found.diff.to_dict()
    for side, ref, record in (("a", found.a, found.record_a), ("b", found.b, found.record_b)):
        data[side] = {
            "run_id": ref.run_id,
            "case_id": ref.case_id,
            "attempt": ref.attempt,
            "verdict": record.verdict,
            "failure_type": record.failure_type,
        }
    return data
