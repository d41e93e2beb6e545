"""The store's generated cases waiting for approval (``pending_cases``).

Pending cases are generated ones (``seatrial cases expand``, cases from traces) that no run
uses until a person approves them; approving writes one new golden version holding them
(:class:`~seatrial.store._golden.GoldenMixin`), and every approval rule is checked here,
whoever calls.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from seatrial.case import Case
from seatrial.errors import InputError, StoreError
from seatrial.i18n import gettext as _
from seatrial.store._golden import GoldenMixin
from seatrial.store._golden_records import PENDING_STATUSES, PendingCase
from seatrial.store._schema import pending_cases
from seatrial.store._url import mask_url

_PENDING_COLUMNS = tuple(name for name in PendingCase.model_fields if name != "case")


class PendingMixin(GoldenMixin):
    """Store methods for pending cases; approving one appends to its golden set."""

    def add_pending(self, items: Sequence[PendingCase]) -> None:
        """Store generated cases as pending, all in one transaction."""
        if not items:
            return
        rows = [self._pending_row(item) for item in items]
        with self._golden_write_once(
            _("store {count} pending cases").format(count=len(items))
        ) as connection:
            connection.execute(insert(pending_cases), rows)

    def pending_cases(
        self, status: str | None = "pending", dataset: str | None = None
    ) -> list[PendingCase]:
        """Pending cases oldest first, of one status (None: all) and one golden set."""
        if status is not None and status not in PENDING_STATUSES:
            raise InputError(
                _("a pending case's status is one of {names}, not {status}").format(
                    names=", ".join(PENDING_STATUSES), status=repr(status)
                )
            )
        query = select(pending_cases).order_by(pending_cases.c.created_at, pending_cases.c.id)
        if status is not None:
            query = query.where(pending_cases.c.status == status)
        if dataset is not None:
            query = query.where(pending_cases.c.dataset == dataset)
        with self._golden_read(_("read the pending cases")) as connection:
            rows = connection.execute(query).mappings().all()
        return [self._pending(dict(row)) for row in rows]

    def pending_case(self, pending_id: str) -> PendingCase:
        """One pending case by its id (whatever its status)."""
        with self._golden_read(
            _("read pending case {pending_id}").format(pending_id=repr(pending_id))
        ) as connection:
            rows = self._pending_rows(connection, [pending_id])
        return self._pending(rows[0])

    def approve_pending(
        self,
        ids: Sequence[str],
        *,
        who: str,
        dataset: str | None = None,
        note: str = "",
        kept: Mapping[str, Collection[int]] | None = None,
    ) -> int:
        """Approve pending cases into one new version of their golden set; return it.

        Every approval rule is checked here, whoever calls: a person is named (``who``), each
        id is undecided, the cases have one golden set (``dataset`` names it when they do not,
        or overrides theirs), and no case id is already active in it. ``kept`` gives, per
        pending id, the indexes of the proposed assertions to keep (cases from traces): a
        choice other than the stored one approves a replacement case with that choice, and
        the original is rejected as replaced by it. The replacements, the rejections, the
        version and the approvals are written in one transaction: a refused approval writes
        nothing, and a refusal is an :class:`InputError` naming what to change.
        """
        if not ids:
            raise InputError(_("no pending case ids given; list the pending cases to find them"))
        if not who.strip():
            raise InputError(_("say who approves the cases (--who, default $USER)"))

        def work(connection: Connection) -> int:
            rows = self._pending_rows(connection, ids, undecided=True)
            rows = [
                self._with_kept(connection, row, (kept or {}).get(row["id"]), who) for row in rows
            ]
            targets = {dataset or row["dataset"] for row in rows}
            if targets == {""} or len(targets) > 1:
                named = ", ".join(sorted(t for t in targets if t)) or _("none")
                raise InputError(
                    _(
                        "the pending cases name {named} as their golden set; say which one "
                        "to approve them into (--dataset NAME; Golden set on the dashboard)"
                    ).format(named=named)
                )
            target = targets.pop()
            cases = [Case.model_validate(row["definition"]) for row in rows]
            active, _retired = self._replay(
                connection, target, self._newest_version(connection, target)
            )
            taken = [case.id for case in cases if case.id in active]
            if taken:
                raise InputError(
                    _(
                        "golden set {target} already has active cases with the ids {names}; "
                        "reject these pending cases, or retire the active ones first"
                    ).format(target=repr(target), names=", ".join(taken))
                )
            approved_note = note or f"approved {len(cases)} pending cases"
            version = self._append(connection, target, cases, {}, who, approved_note)
            connection.execute(
                update(pending_cases)
                .where(pending_cases.c.id.in_([row["id"] for row in rows]))
                .values(
                    status="approved",
                    decided_by=who,
                    decided_at=time.time(),
                    note=note,
                    version=version,
                    dataset=target,
                )
            )
            return version

        return self._golden_write(_("approve {count} pending cases").format(count=len(ids)), work)

    def _with_kept(
        self, connection: Connection, row: dict[str, Any], kept: Collection[int] | None, who: str
    ) -> dict[str, Any]:
        """The row to approve: ``row`` itself, or a replacement with the proposals ``kept``
        (written, the original rejected as replaced by it) when that choice differs."""
        replacement = None if kept is None else self._pending(row).with_kept(kept)
        if replacement is None:
            return row
        replaced = self._pending_row(replacement)
        connection.execute(insert(pending_cases), [replaced])
        connection.execute(
            update(pending_cases)
            .where(pending_cases.c.id == row["id"])
            .values(
                status="rejected",
                decided_by=who,
                decided_at=time.time(),
                note=f"replaced by {replacement.id}: the proposed assertions kept were changed",
            )
        )
        return replaced

    def reject_pending(self, ids: Sequence[str], *, who: str, reason: str) -> None:
        """Reject pending cases with a reason; they never join a golden set."""
        if not ids:
            raise InputError(_("no pending case ids given; list the pending cases to find them"))
        if not reason.strip():
            raise InputError(_("say why the cases are rejected (--reason)"))
        if not who.strip():
            raise InputError(_("say who rejects the cases (--who, default $USER)"))
        with self._golden_write_once(
            _("reject {count} pending cases").format(count=len(ids))
        ) as connection:
            rows = self._pending_rows(connection, ids, undecided=True)
            connection.execute(
                update(pending_cases)
                .where(pending_cases.c.id.in_([row["id"] for row in rows]))
                .values(status="rejected", decided_by=who, decided_at=time.time(), note=reason)
            )

    def _pending_rows(
        self, connection: Connection, ids: Sequence[str], undecided: bool = False
    ) -> list[dict[str, Any]]:
        wanted = list(dict.fromkeys(ids))
        rows = connection.execute(select(pending_cases).where(pending_cases.c.id.in_(wanted)))
        found = {row["id"]: dict(row) for row in rows.mappings()}
        missing = [pending_id for pending_id in wanted if pending_id not in found]
        if missing:
            raise InputError(
                _(
                    "no pending case {names} in the store at {url}; list the pending "
                    "cases to see their ids"
                ).format(names=", ".join(missing), url=mask_url(self._engine.url))
            )
        decided = [f"{i} ({found[i]['status']})" for i in wanted if found[i]["status"] != "pending"]
        if undecided and decided:
            raise InputError(
                _(
                    "already decided: {names}; a decision is final, propose the case "
                    "again to decide anew"
                ).format(names=", ".join(decided))
            )
        return [found[pending_id] for pending_id in wanted]

    def _pending_row(self, item: PendingCase) -> dict[str, Any]:
        row = {name: getattr(item, name) for name in _PENDING_COLUMNS}
        row["case_id"] = item.case.id
        row["definition"] = item.case.model_dump(mode="json")
        return row

    def _pending(self, row: Mapping[str, Any]) -> PendingCase:
        values = {name: row[name] for name in _PENDING_COLUMNS}
        try:
            return PendingCase.model_validate({**values, "case": row["definition"]})
        except ValidationError as exc:
            raise StoreError(
                _(
                    "the store at {url} holds a pending case this Seatrial cannot read "
                    "({value}); was it written by a newer Seatrial? upgrade seatrial"
                ).format(url=mask_url(self._engine.url), value=exc.errors()[0]["msg"])
            ) from exc
