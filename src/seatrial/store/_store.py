"""The store: runs, their cases, attempts and traces in SQLite or PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from seatrial.case import Case
from seatrial.errors import InputError, RunNotFound
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import _codec as codec
from seatrial.store._adopt import adopt_exported_spans
from seatrial.store._attempt_reads import AttemptReadsMixin
from seatrial.store._bulk import insert_many
from seatrial.store._codec import EncodedAttempts, encode_attempts
from seatrial.store._gc import GcMixin
from seatrial.store._golden_chain import ChainMixin
from seatrial.store._judging import JudgingMixin
from seatrial.store._ledger import LedgerMixin
from seatrial.store._listing import run_rows, tags_of
from seatrial.store._once import unstored
from seatrial.store._open import open_engine
from seatrial.store._pending import PendingMixin
from seatrial.store._schema import attempts, run_cases, run_tags, runs, spans
from seatrial.store._traces import TracesMixin
from seatrial.store._translate import translated

T = TypeVar("T")

RUN_STATUSES = ("running", "finished", "interrupted")
"""The statuses a run can have (see :class:`~seatrial.record.RunInfo`)."""


class Store(
    AttemptReadsMixin, LedgerMixin, JudgingMixin, TracesMixin, PendingMixin, ChainMixin, GcMixin
):
    """Where runs are kept. Open it with :meth:`Store.open`; close it (or use ``with``).

    Every method is safe to call from any thread: each takes its own pooled connection.
    """

    @classmethod
    def open(cls, url: str | None = None, project_dir: Path | None = None) -> Store:
        """Open the store, creating or migrating its schema as needed.

        ``url`` defaults to ``$SEATRIAL_DB_URL``, else ``sqlite:///.seatrial/seatrial.db`` in
        ``project_dir`` (the current folder when not given).
        """
        return cls(open_engine(url, project_dir))

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # Writing.

    def create_run(self, info: RunInfo, cases: Sequence[Case]) -> None:
        """Store a new run's header and the cases it will run, in suite order."""
        tries = 0

        def create(c: Connection) -> None:
            nonlocal tries
            tries += 1
            if (
                tries > 1
                and c.execute(select(runs.c.run_id).where(runs.c.run_id == info.run_id)).first()
            ):
                return  # the try whose connection was lost had committed
            c.execute(insert(runs), [codec.run_row(info)])
            if info.tags:
                c.execute(insert(run_tags), codec.tag_rows(info))
            if cases:
                c.execute(insert(run_cases), codec.case_rows(info.run_id, cases))

        action = _("create run {run_id}").format(run_id=repr(info.run_id))
        with translated(
            self._engine.url,
            action,
            integrity=_(
                "a run id is stored once (resume the run rather than create it again) and its "
                "case ids must be unique"
            ),
        ):
            self._transact(action, create)

    def save_attempts(self, records: Sequence[AttemptRecord]) -> int:
        """Store finished attempts and their traces, all in one transaction.

        Either the whole batch is stored or none of it is (the error says which). An
        attempt whose (run, case, attempt) is already stored is skipped; returns how many
        were stored.
        """
        return self.save_encoded([encode_attempts(records)])

    def save_encoded(self, batches: Sequence[EncodedAttempts]) -> int:
        """Store attempts already encoded by :func:`encode_attempts`, in one transaction.

        The runner encodes each attempt on the event loop as it finishes and leaves only the
        database's own work to its writer thread, which holds the GIL far less that way.
        Spans the agent exported with an attempt's trace id before it was stored (kept as a
        production trace until now) move onto the attempt in the same transaction.

        An attempt is stored once per (run, case, attempt): one whose key is already stored
        (a resumed or re-delivered attempt, a write retried after its commit was lost) is
        skipped with its spans, so nothing stored is replaced and nothing doubled. A lost
        connection is retried for up to 60 s (``RECONNECT_LIMIT_S``). Returns how many
        attempts were stored.
        """
        attempt_rows = [row for batch in batches for row in batch.attempt_rows]
        if not attempt_rows:
            return 0
        span_rows = [row for batch in batches for row in batch.span_rows]
        run_ids = sorted({run_id for batch in batches for run_id in batch.run_ids})

        filtered = False

        def store(connection: Connection) -> int:
            fresh, fresh_spans = attempt_rows, span_rows
            if filtered:
                fresh, fresh_spans = unstored(connection, attempt_rows, span_rows)
            insert_many(connection, attempts, codec.ATTEMPT_COLUMNS, fresh, many_rows=True)
            insert_many(connection, spans, codec.SPAN_COLUMNS, fresh_spans, many_rows=True)
            adopt_exported_spans(connection, fresh, fresh_spans)
            return len(fresh)

        action = _("save {count} attempts of run {runs}").format(
            count=len(attempt_rows), runs=", ".join(run_ids)
        )
        with translated(
            self._engine.url,
            action,
            note=_("none of this batch was stored"),
            integrity=_(
                "an attempt is stored once per (run, case, attempt) and its run must have been "
                "created first"
            ),
        ):
            # Written as given first: a key stored already is rare, and looking for one
            # costs a query per batch on the runner's hot path. The unique constraint refuses
            # a batch holding one; it is then written again without the stored keys, and once
            # more if another writer stored one of them meanwhile (PostgreSQL; SQLite's
            # writers take turns). Any other refusal (a run never created) is raised.
            for tries_left in (2, 1, 0):
                try:
                    return self._transact(action, store, many_rows=True)
                except IntegrityError:
                    if not tries_left:
                        raise
                filtered = True
            raise AssertionError("unreachable: the last try returns or raises")

    def finish_run(self, run_id: str, status: str, finished_at: float) -> None:
        """Set a run's status (``finished``, ``interrupted``, ``running``) and end time."""
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {RUN_STATUSES}, not {status!r}")

        def finish(connection: Connection) -> int:
            result = connection.execute(
                update(runs)
                .where(runs.c.run_id == run_id)
                .values(status=status, finished_at=finished_at)
            )
            return int(result.rowcount)

        action = _("finish run {run_id}").format(run_id=repr(run_id))
        with translated(self._engine.url, action):
            updated = self._transact(action, finish)
        if updated == 0:
            raise self._not_found(run_id)

    # Reading.

    def get_run(self, run_id: str) -> RunInfo:
        """A run's header; :class:`RunNotFound` when no run has this id."""

        def read(connection: Connection) -> tuple[Any, dict[str, list[str]]]:
            row = connection.execute(select(runs).where(runs.c.run_id == run_id)).mappings().first()
            return row, tags_of(connection, [run_id]) if row is not None else {}

        row, tags = self._reading(_("read run {run_id}").format(run_id=repr(run_id)), read)
        if row is None:
            raise self._not_found(run_id)
        return self._decode(lambda: codec.run_info(row, tags.get(run_id, [])))

    def list_runs(
        self,
        limit: int | None = 50,
        suite: str | None = None,
        agent: str | None = None,
        tag: str | None = None,
    ) -> list[RunInfo]:
        """Runs newest first, optionally only those of a suite, an agent, or with a tag."""
        with self._read(_("list runs")) as connection:
            rows = run_rows(connection, limit, suite, agent, tag)
            tags = tags_of(connection, [row["run_id"] for row in rows])
            return self._decode(
                lambda: [codec.run_info(row, tags.get(row["run_id"], [])) for row in rows]
            )

    def resolve_run_id(self, ref: str) -> str:
        """The full run id for ``ref``: a full id, a unique prefix of one, or ``latest``."""
        with self._read(_("find run {ref}").format(ref=repr(ref))) as connection:
            if ref == "latest":
                latest = connection.execute(
                    select(runs.c.run_id)
                    .order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
                    .limit(1)
                ).scalar()
                if latest is None:
                    raise RunNotFound(
                        _(
                            "the store at {url} holds no runs yet, so there is no `latest`; run "
                            "a suite first (`seatrial run SUITE`)"
                        ).format(url=self.url)
                    )
                return str(latest)
            if not ref:
                raise RunNotFound(_("no run id given; give a run id, a prefix of one, or `latest`"))
            exact = select(runs.c.run_id).where(runs.c.run_id == ref)
            if connection.execute(exact).first() is not None:
                return ref
            # substr, not LIKE: LIKE ignores case in SQLite and treats % and _ as wildcards.
            matches = (
                connection.execute(
                    select(runs.c.run_id)
                    .where(func.substr(runs.c.run_id, 1, len(ref)) == ref)
                    .order_by(runs.c.started_at.desc())
                    .limit(6)
                )
                .scalars()
                .all()
            )
        if not matches:
            raise self._not_found(ref)
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
            raise InputError(
                _(
                    "run id prefix {ref} matches more than one run ({shown}); give more "
                    "characters of the id"
                ).format(ref=repr(ref), shown=shown)
            )
        return str(matches[0])

    def run_cases(self, run_id: str) -> list[Case]:
        """The cases of a run as they were run, in suite order."""

        def read(connection: Connection) -> Sequence[Any]:
            definitions = (
                connection.execute(
                    select(run_cases.c.definition)
                    .where(run_cases.c.run_id == run_id)
                    .order_by(run_cases.c.position)
                )
                .scalars()
                .all()
            )
            if not definitions:
                self._check_run(connection, run_id)
            return definitions

        definitions = self._reading(
            _("read the cases of run {run_id}").format(run_id=repr(run_id)), read
        )
        return self._decode(lambda: [codec.case_of(d) for d in definitions])

    # Helpers.
