"""Reading a run's attempts: what resume skips, verdict counts, records and traces."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, and_, func, literal_column, select, tuple_
from sqlalchemy.engine import Connection

from seatrial.errors import InputError
from seatrial.record import AttemptRecord, Verdict
from seatrial.store import _codec as codec
from seatrial.store._core import StoreCore
from seatrial.store._listing import verdict_counts
from seatrial.store._schema import attempts, run_cases, spans
from seatrial.trace import Trace

PAGE = 500
"""Attempts :meth:`AttemptReadsMixin.attempts_in_pages` reads at a time (about 16 KB each
decoded without their traces: a page is some 8 MB, whatever the run's size)."""


class StoredVerdicts(NamedTuple):
    """Attempts stored past a point of a run's storing order (:meth:`Store.verdicts_since`)."""

    verdicts: dict[tuple[str, int], tuple[Verdict, str | None]]
    """Verdict and failure type by ``(case_id, attempt)``."""
    last_seq: int
    """The storing order's point reached: pass it as ``after`` next time."""


class AttemptReadsMixin(StoreCore):
    """The store's reads of stored attempts."""

    def verdicts_since(self, run_id: str, after: int = 0) -> StoredVerdicts:
        """The verdicts of a run's attempts stored after point ``after`` of the storing
        order (0: all of them): what a coordinator following a run reads on each poll, so a
        poll costs what was stored since the last one, not the whole run.

        Two writers that commit out of order can leave an attempt numbered below
        ``last_seq`` that a later call does not return; compare :meth:`stored_count` with
        what was seen and read from 0 again when it is higher. Attempts stored before
        revision 0010 have no number and come back only from 0.
        """

        def read(connection: Connection) -> StoredVerdicts:
            seq = _seq(connection)
            query = select(
                attempts.c.case_id,
                attempts.c.attempt,
                attempts.c.verdict,
                attempts.c.failure_type,
                seq,
            ).where(attempts.c.run_id == run_id)
            if after:
                query = query.where(seq > after)
            verdicts: dict[tuple[str, int], tuple[Verdict, str | None]] = {}
            last = after
            for case_id, attempt, verdict, failure_type, number in connection.execute(query):
                verdicts[(str(case_id), int(attempt))] = (verdict, failure_type)
                if number is not None and number > last:
                    last = int(number)
            return StoredVerdicts(verdicts, last)

        return self._reading(f"read the verdicts of run {run_id!r}", read)

    def stored_count(self, run_id: str) -> int:
        """How many attempts of a run are stored (counted by the database)."""

        def read(connection: Connection) -> int:
            query = select(func.count()).where(attempts.c.run_id == run_id)
            return int(connection.execute(query).scalar() or 0)

        return self._reading(f"count the attempts of run {run_id!r}", read)

    def stored_among(self, run_id: str, keys: Sequence[tuple[str, int]]) -> set[tuple[str, int]]:
        """Which of ``keys`` (``(case_id, attempt)`` pairs of run ``run_id``) are stored, in
        one query: a worker asks before running delivered attempts, so a delivery of a stored
        one costs no agent call."""
        if not keys:
            return set()
        wanted = set(keys)
        query = select(attempts.c.case_id, attempts.c.attempt).where(
            attempts.c.run_id == run_id,
            tuple_(attempts.c.case_id, attempts.c.attempt).in_(sorted(wanted)),
        )

        def read(connection: Connection) -> set[tuple[str, int]]:
            return {(str(case_id), int(attempt)) for case_id, attempt in connection.execute(query)}

        return self._reading(f"look up {len(wanted)} attempts of run {run_id!r}", read)

    def finished_attempts(self, run_id: str) -> set[tuple[str, int]]:
        """The ``(case_id, attempt)`` pairs stored for a run: what a resume skips."""

        def read(connection: Connection) -> set[tuple[str, int]]:
            rows = connection.execute(
                select(attempts.c.case_id, attempts.c.attempt).where(attempts.c.run_id == run_id)
            ).all()
            if not rows:
                self._check_run(connection, run_id)
            return {(str(case_id), int(attempt)) for case_id, attempt in rows}

        return self._reading(f"read the attempts of run {run_id!r}", read)

    def verdict_counts(self, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Attempts per verdict for each run, counted by the database (for run lists)."""
        with self._read("count the attempts of runs") as connection:
            return verdict_counts(connection, run_ids)

    def attempts(
        self, run_id: str, case_id: str | None = None, with_traces: bool = False
    ) -> list[AttemptRecord]:
        """A run's attempts (of one case, when given) in suite order, then by attempt.

        Traces are read only ``with_traces``; otherwise each record's ``trace`` is None.
        """
        joined = attempts.outerjoin(
            run_cases,
            and_(
                run_cases.c.run_id == attempts.c.run_id,
                run_cases.c.case_id == attempts.c.case_id,
            ),
        )
        query = (
            select(attempts)
            .select_from(joined)
            .where(attempts.c.run_id == run_id)
            .order_by(
                run_cases.c.position.is_(None),
                run_cases.c.position,
                attempts.c.case_id,
                attempts.c.attempt,
            )
        )
        span_query = (
            select(spans)
            .join(attempts, spans.c.attempt_id == attempts.c.id)
            .where(attempts.c.run_id == run_id)
            .order_by(spans.c.attempt_id, spans.c.position)
        )
        if case_id is not None:
            query = query.where(attempts.c.case_id == case_id)
            span_query = span_query.where(attempts.c.case_id == case_id)

        def read(conn: Connection) -> tuple[Sequence[Any], dict[str, list[dict[str, Any]]]]:
            rows = conn.execute(query).mappings().all()
            if not rows:
                self._check_run(conn, run_id)
            by_attempt: dict[str, list[dict[str, Any]]] = {}
            if rows and with_traces:
                for span in conn.execute(span_query).mappings():
                    by_attempt.setdefault(span["attempt_id"], []).append(codec.span_dict(span))
            return rows, by_attempt

        with codec.collector_paused():
            action = f"read the attempts of run {run_id!r}"
            rows, by_attempt = self._reading(action, read, snapshot=with_traces)
            return self._decode(
                lambda: [
                    codec.attempt_record(row, by_attempt.get(row["id"], []))
                    if with_traces
                    else codec.attempt_record(row, None)
                    for row in rows
                ]
            )

    def attempts_in_pages(
        self, run_id: str, cases: Iterable[tuple[str, int]], page: int = PAGE
    ) -> Iterator[AttemptRecord]:
        """The attempts of ``cases`` (each a case id and how many attempts it has stored), in
        that order, then by attempt; without traces. Read ``page`` attempts at a time: the
        cases are read in groups of at most ``page`` attempts, a larger case a page at a time,
        so what a report file streams costs the same memory at any run size.
        """
        group: list[str] = []
        size = 0
        for case_id, count in cases:
            if group and size + count > page:
                yield from self._attempts_of_cases(run_id, group)
                group, size = [], 0
            if count > page:
                yield from self._attempts_of_case(run_id, case_id, page)
                continue
            group.append(case_id)
            size += count
        if group:
            yield from self._attempts_of_cases(run_id, group)

    def _attempts_of_cases(self, run_id: str, case_ids: list[str]) -> list[AttemptRecord]:
        """Every attempt of ``case_ids`` (a group small enough for one page), in their order."""
        query = select(attempts).where(
            attempts.c.run_id == run_id, attempts.c.case_id.in_(case_ids)
        )
        place = {case_id: n for n, case_id in enumerate(case_ids)}
        records = self._attempt_page(run_id, query)
        return sorted(records, key=lambda r: (place[r.case_id], r.attempt))

    def _attempts_of_case(self, run_id: str, case_id: str, page: int) -> Iterator[AttemptRecord]:
        """Every attempt of one case, a page at a time (each page from where the last ended)."""
        after = 0
        while True:
            query = (
                select(attempts)
                .where(
                    attempts.c.run_id == run_id,
                    attempts.c.case_id == case_id,
                    attempts.c.attempt > after,
                )
                .order_by(attempts.c.attempt)
                .limit(page)
            )
            records = self._attempt_page(run_id, query)
            yield from records
            if len(records) < page:
                return
            after = records[-1].attempt

    def _attempt_page(self, run_id: str, query: Any) -> list[AttemptRecord]:
        def read(connection: Connection) -> Sequence[Any]:
            return connection.execute(query).mappings().all()

        rows = self._reading(f"read the attempts of run {run_id!r}", read)
        return self._decode(lambda: [codec.attempt_record(row, None) for row in rows])

    def attempt_trace(self, run_id: str, case_id: str, attempt: int) -> Trace:
        """The trace of one attempt."""
        from seatrial.i18n import gettext as _  # its errors, in the reader's language

        where = and_(
            attempts.c.run_id == run_id,
            attempts.c.case_id == case_id,
            attempts.c.attempt == attempt,
        )
        action = _("read the trace of run {run_id}").format(run_id=repr(run_id))
        with self._read(action, snapshot=True) as connection:
            found = select(attempts.c.id, attempts.c.trace_id).where(where)
            row = connection.execute(found).first()
            if row is None:
                self._check_run(connection, run_id)
                raise InputError(
                    _(
                        "run {run_id} has no attempt {attempt} of case {case_id}; check the "
                        "case id and the attempt number (they start at 1)"
                    ).format(run_id=repr(run_id), attempt=attempt, case_id=repr(case_id))
                )
            if row.trace_id is None:
                raise InputError(
                    _(
                        "attempt {attempt} of case {case_id} in run {run_id} has no trace: the "
                        "agent was never reached; its error says why"
                    ).format(attempt=attempt, case_id=repr(case_id), run_id=repr(run_id))
                )
            span_rows = (
                connection.execute(
                    select(spans).where(spans.c.attempt_id == row.id).order_by(spans.c.position)
                )
                .mappings()
                .all()
            )
            return self._decode(lambda: codec.trace_of(row.trace_id, span_rows))

    def case_verdict_counts(self, run_ids: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
        """Attempts per verdict of each case of each run (run -> case -> verdict -> count),
        counted by the database; a run without attempts maps to an empty dict."""
        counts: dict[str, dict[str, dict[str, int]]] = {run_id: {} for run_id in run_ids}
        if not run_ids:
            return counts
        with self._read("count the attempts of each case") as connection:
            rows = connection.execute(
                select(attempts.c.run_id, attempts.c.case_id, attempts.c.verdict, func.count())
                .where(attempts.c.run_id.in_(list(run_ids)))
                .group_by(attempts.c.run_id, attempts.c.case_id, attempts.c.verdict)
            ).all()
        for run_id, case_id, verdict, count in rows:
            counts[str(run_id)].setdefault(str(case_id), {})[str(verdict)] = int(count)
        return counts


def _seq(connection: Connection) -> ColumnElement[Any]:
    """The storing order: ``stored_seq`` on PostgreSQL; SQLite numbers rows (``rowid``) in
    the order its writers, who take turns, inserted them."""
    if connection.dialect.name == "sqlite":
        return literal_column("attempts.rowid")
    return attempts.c.stored_seq
