"""Attempt references, ``RUN:CASE`` or ``RUN:CASE#N``: how ``seatrial diff`` names an attempt.

RUN is a full run id, a unique prefix of one, or ``latest``. ``#N`` is the 1-based attempt;
without it the first attempt whose verdict is not PASS is meant (else attempt 1), since that
is the one a person asks about. A bare RUN takes its case (and attempt) from the options.
"""

from __future__ import annotations

from dataclasses import dataclass

from seatrial.compare._baseline import resolve_run_ref
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord
from seatrial.store import Store

_SHOWN_CASES = 8


@dataclass(frozen=True)
class AttemptRef:
    """One stored attempt: run, case, 1-based attempt."""

    run_id: str
    case_id: str
    attempt: int

    def __str__(self) -> str:
        return f"{self.run_id}:{self.case_id}#{self.attempt}"


def _split(ref: str) -> tuple[str, str | None, int | None]:
    """``RUN``, ``CASE`` and ``N`` of a reference; the split is at the first ``:``."""
    run, colon, rest = ref.strip().partition(":")
    if not colon:
        return run, None, None
    case, hash_, number = rest.rpartition("#")
    if hash_ and number.isdigit():
        return run, case, int(number)
    return run, rest, None


def _cases_hint(store: Store, run_id: str) -> str:
    case_ids = [c.id for c in store.run_cases(run_id)]
    if not case_ids:
        case_ids = list(dict.fromkeys(a.case_id for a in store.attempts(run_id)))
    if not case_ids:
        return _("it holds no cases")
    shown = ", ".join(case_ids[:_SHOWN_CASES])
    if len(case_ids) > _SHOWN_CASES:
        return _("its cases: {shown}, ... ({n} in all)").format(shown=shown, n=len(case_ids))
    return _("its cases: {shown}").format(shown=shown)


def parse_attempt_ref(
    store: Store, ref: str, case: str | None = None, attempt: int | None = None
) -> AttemptRef:
    """Resolve ``RUN:CASE#N`` (or ``RUN`` with ``case``/``attempt``) to a stored attempt.

    A case or attempt written in ``ref`` wins over ``case`` and ``attempt``. Raises
    :class:`InputError` (exit 2) for an unknown run, case or attempt, saying what exists.
    """
    run_ref, ref_case, ref_attempt = _split(ref)
    if not run_ref:
        raise InputError(
            _(
                "attempt reference {ref!r} names no run; write RUN:CASE or RUN:CASE#N "
                "(RUN: a run id, a unique prefix, a tag, or `latest`)"
            ).format(ref=ref)
        )
    run_id = resolve_run_ref(store, run_ref)
    case_id = ref_case or case
    if not case_id:
        raise InputError(
            _(
                "{ref!r} names a run but no case; write {run}:CASE or add --case CASE ({hint})"
            ).format(ref=ref, run=run_ref, hint=_cases_hint(store, run_id))
        )
    records = store.attempts(run_id, case_id)
    if not records:
        raise InputError(
            _(
                "run {run_id} has no case {case_id!r} ({hint}); write {run}:CASE with one of them"
            ).format(run_id=run_id, case_id=case_id, hint=_cases_hint(store, run_id), run=run_ref)
        )
    number = ref_attempt if ref_attempt is not None else attempt
    if number is None:
        failing = [r.attempt for r in records if r.verdict != "PASS"]
        numbers = [r.attempt for r in records]
        number = failing[0] if failing else (1 if 1 in numbers else numbers[0])
    if number not in {r.attempt for r in records}:
        stored = ", ".join(str(r.attempt) for r in records)
        raise InputError(
            _(
                "case {case_id!r} of run {run_id} has no attempt {number} (stored: {stored}); "
                "write {run}:{case_id}#N with one of them"
            ).format(case_id=case_id, run_id=run_id, number=number, stored=stored, run=run_ref)
        )
    return AttemptRef(run_id=run_id, case_id=case_id, attempt=number)


def load_attempt(store: Store, ref: AttemptRef) -> AttemptRecord:
    """The stored attempt a reference names, read with its trace."""
    for record in store.attempts(ref.run_id, ref.case_id, with_traces=True):
        if record.attempt == ref.attempt:
            return record
    raise InputError(
        _("no stored attempt {ref}; `seatrial report {run_id}` lists its cases").format(
            ref=ref, run_id=ref.run_id
        )
    )
