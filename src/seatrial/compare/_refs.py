"""Attempt references, ``RUN:CASE`` or ``RUN:CASE#N``: how ``seatrial diff`` names an attempt.

RUN is a full run id, a unique prefix of one, or ``latest``. ``#N`` is the 1-based attempt;
without it the first attempt whose verdict is not PASS is meant (else attempt 1), since that
is the one a person asks about. A bare RUN takes its case (and attempt) from the options.
"""

from __future__ import annotations

from dataclasses import dataclass

from seatrial.compare._baseline import resolve_run_ref
from seatrial.errors import InputError
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
    shown = ", ".join(case_ids[:_SHOWN_CASES])
    more = f", ... ({len(case_ids)} in all)" if len(case_ids) > _SHOWN_CASES else ""
    return f"its cases: {shown}{more}" if case_ids else "it holds no cases"


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
            f"attempt reference {ref!r} names no run; write RUN:CASE or RUN:CASE#N "
            "(RUN: a run id, a unique prefix, a tag, or `latest`)"
        )
    run_id = resolve_run_ref(store, run_ref)
    case_id = ref_case or case
    if not case_id:
        raise InputError(
            f"{ref!r} names a run but no case; write {run_ref}:CASE or add --case CASE "
            f"({_cases_hint(store, run_id)})"
        )
    records = store.attempts(run_id, case_id)
    if not records:
        raise InputError(
            f"run {run_id} has no case {case_id!r} ({_cases_hint(store, run_id)}); "
            f"write {run_ref}:CASE with one of them"
        )
    number = ref_attempt if ref_attempt is not None else attempt
    if number is None:
        failing = [r.attempt for r in records if r.verdict != "PASS"]
        numbers = [r.attempt for r in records]
        number = failing[0] if failing else (1 if 1 in numbers else numbers[0])
    if number not in {r.attempt for r in records}:
        stored = ", ".join(str(r.attempt) for r in records)
        raise InputError(
            f"case {case_id!r} of run {run_id} has no attempt {number} (stored: {stored}); "
            f"write {run_ref}:{case_id}#N with one of them"
        )
    return AttemptRef(run_id=run_id, case_id=case_id, attempt=number)


def load_attempt(store: Store, ref: AttemptRef) -> AttemptRecord:
    """The stored attempt a reference names, read with its trace."""
    for record in store.attempts(ref.run_id, ref.case_id, with_traces=True):
        if record.attempt == ref.attempt:
            return record
    raise InputError(f"no stored attempt {ref}; `seatrial report {ref.run_id}` lists its cases")
