"""Named queries behind a run's report: its attempts counted by case, verdict and failure
type, each case's first attempt that did not pass, and every attempt's figures in suite
order.

The report of a 100,000-attempt run holds per case a few counts, per attempt a few numbers
(what its gate reads), and never the attempts themselves: their replies and assertions are
streamed into report.json and junit.xml a page at a time
(:meth:`Store.attempts_in_pages`). See docs/performance.md, "Local scale".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import and_, func, select

from seatrial.i18n import gettext as _
from seatrial.record import Verdict
from seatrial.store._reads import reading
from seatrial.store._reads_runs import AttemptFigures
from seatrial.store._schema import attempts, run_cases

if TYPE_CHECKING:
    from seatrial.store._store import Store


class CaseCount(NamedTuple):
    """The attempts of one case that share a verdict and failure type, counted."""

    case_id: str
    verdict: Verdict
    failure_type: str | None
    attempts: int


class FirstFailure(NamedTuple):
    """A case's first attempt (by number) whose verdict is not PASS."""

    case_id: str
    attempt: int
    failure_type: str | None
    reason: str
    message: dict[str, Any] | None
    """The reason as a message (``seatrial.i18n.Message``); None for attempts stored before."""


def case_counts(store: Store, run_id: str) -> list[CaseCount]:
    """The attempts of the cases the run lists, counted by case, verdict and failure type, in
    suite order (within a case in no particular order). Attempts of a case the run does not
    list are not counted: no report shows them."""
    listed = attempts.join(
        run_cases,
        and_(run_cases.c.run_id == attempts.c.run_id, run_cases.c.case_id == attempts.c.case_id),
    )
    query = (
        select(
            attempts.c.case_id,
            attempts.c.verdict,
            attempts.c.failure_type,
            func.count(),
        )
        .select_from(listed)
        .where(attempts.c.run_id == run_id)
        .group_by(
            run_cases.c.position, attempts.c.case_id, attempts.c.verdict, attempts.c.failure_type
        )
        .order_by(run_cases.c.position)
    )
    with reading(
        store, _("count the attempts of run {run_id}").format(run_id=repr(run_id))
    ) as connection:
        return [
            CaseCount(str(case_id), verdict, failure_type, int(count))
            for case_id, verdict, failure_type, count in connection.execute(query)
        ]


def first_failures(store: Store, run_id: str) -> dict[str, FirstFailure]:
    """Case id -> its first attempt that did not pass (the one a summary quotes), for every
    case of the run with one."""
    ranked = (
        select(
            attempts.c.case_id,
            attempts.c.attempt,
            attempts.c.failure_type,
            attempts.c.reason,
            attempts.c.message,
            func.row_number()
            .over(partition_by=attempts.c.case_id, order_by=attempts.c.attempt)
            .label("rank"),
        )
        .where(attempts.c.run_id == run_id, attempts.c.verdict != "PASS")
        .subquery()
    )
    query = select(
        ranked.c.case_id,
        ranked.c.attempt,
        ranked.c.failure_type,
        ranked.c.reason,
        ranked.c.message,
    ).where(ranked.c.rank == 1)
    with reading(
        store, _("find the failing attempts of run {run_id}").format(run_id=repr(run_id))
    ) as connection:
        return {
            str(case_id): FirstFailure(
                str(case_id), int(attempt), failure_type, str(reason), message
            )
            for case_id, attempt, failure_type, reason, message in connection.execute(query)
        }


def run_figures(
    store: Store, run_id: str, *, listed_only: bool = False
) -> Iterator[AttemptFigures]:
    """The figures of a run's attempts in :meth:`Store.attempts` order: the listed cases in
    suite order, then (unless ``listed_only``) the others by id; within a case by attempt.

    Yielded as the database returns them, so the caller keeps only what it needs of each.
    """
    joined = (attempts.join if listed_only else attempts.outerjoin)(
        run_cases,
        and_(run_cases.c.run_id == attempts.c.run_id, run_cases.c.case_id == attempts.c.case_id),
    )
    query = (
        select(
            attempts.c.run_id,
            attempts.c.case_id,
            attempts.c.verdict,
            attempts.c.failure_type,
            attempts.c.wall_time_ms,
            attempts.c.input_tokens + attempts.c.output_tokens,
            attempts.c.cost_usd,
            attempts.c.tool_calls,
        )
        .select_from(joined)
        .where(attempts.c.run_id == run_id)
        .order_by(
            run_cases.c.position.is_(None),
            run_cases.c.position,
            attempts.c.case_id,
            attempts.c.attempt,
        )
    )
    # A thousand rows at a time: PostgreSQL's driver would otherwise hold the whole result
    # (some 250 bytes a row) until the last one is read.
    query = query.execution_options(yield_per=1000)
    with (
        reading(
            store, _("read the figures of run {run_id}").format(run_id=repr(run_id))
        ) as connection,
        connection.execute(query) as result,  # closed as well when the caller stops early
    ):
        for row in result:
            yield AttemptFigures._make(row)
