"""The store's golden sets: append-only and versioned.

A golden set is a log. Each version is one row of ``golden_versions`` (who, when, why) and
its changes are rows of ``golden_changes``: a case added (or edited: the same id with a new
definition, from this version on) or retired with a reason. No golden row is ever updated or
deleted, so the set at any version is the changes up to it, replayed, and a run that recorded
``v3`` can always be read as it ran. Two writers appending at once cannot both take the same
version: ``(dataset, version)`` is the key, and the loser retries with the next number.

Generated cases waiting for approval are :mod:`seatrial.store._pending`'s; approving them
appends a version here.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import ValidationError
from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from seatrial.case import Case
from seatrial.errors import InputError, StoreError
from seatrial.i18n import gettext as _
from seatrial.store._golden_chain import chain_head, change_hash, version_hash
from seatrial.store._golden_records import (
    GoldenSnapshot,
    GoldenVersion,
)
from seatrial.store._schema import golden_changes, golden_versions
from seatrial.store._translate import translated
from seatrial.store._url import mask_url

T = TypeVar("T")

_APPEND_TRIES = 50
"""Versions tried before giving up when other writers keep taking the next one."""


class GoldenMixin:
    """Store methods for golden sets."""

    # Set by Store.__init__; declared here so the methods type-check on their own.
    _engine: Engine
    _writer: Engine

    # Golden sets.

    def golden_append(
        self,
        dataset: str,
        *,
        add: Sequence[Case] = (),
        retire: Mapping[str, str] | None = None,
        who: str,
        note: str = "",
    ) -> int:
        """Append one version to ``dataset`` (created by its first version) and return it.

        ``add`` holds new cases, or active ones with a new definition (an edit: the new
        definition counts from this version on); a case identical to the active one is not
        a change. ``retire`` maps case ids to the reason each leaves the set. When nothing
        changes no version is written and the current one is returned.
        """
        retire = dict(retire or {})

        def work(connection: Connection) -> int:
            return self._append(connection, dataset, add, retire, who, note)

        return self._golden_write(
            _("append a version to golden set {dataset}").format(dataset=repr(dataset)), work
        )

    def golden_snapshot(self, dataset: str, version: int | None = None) -> GoldenSnapshot:
        """``dataset`` as it stood at ``version`` (default: the newest)."""
        with self._golden_read(
            _("read golden set {dataset}").format(dataset=repr(dataset))
        ) as connection:
            newest = self._newest_version(connection, dataset)
            if newest == 0:
                raise self._unknown_set(connection, dataset)
            if version is None:
                version = newest
            elif not 1 <= version <= newest:
                raise InputError(
                    _(
                        "golden set {dataset} has versions 1 to {newest}, not {version}; "
                        "`seatrial datasets history {name}` lists them"
                    ).format(dataset=repr(dataset), newest=newest, version=version, name=dataset)
                )
            active, retired = self._replay(connection, dataset, version)
        try:
            cases = [Case.model_validate(definition) for definition in active.values()]
        except ValidationError as exc:
            raise StoreError(
                _(
                    "golden set {dataset} v{version} in the store at {url} holds a case "
                    "this Seatrial cannot read ({value}); was it written by a newer "
                    "Seatrial? upgrade seatrial"
                ).format(
                    dataset=repr(dataset),
                    version=version,
                    url=mask_url(self._engine.url),
                    value=exc.errors()[0]["msg"],
                )
            ) from exc
        return GoldenSnapshot(dataset=dataset, version=version, cases=cases, retired=retired)

    def golden_versions(self, dataset: str) -> list[GoldenVersion]:
        """Every version of ``dataset``, oldest first; empty when there is no such set."""
        query = (
            select(golden_versions)
            .where(golden_versions.c.dataset == dataset)
            .order_by(golden_versions.c.version)
        )
        with self._golden_read(
            _("read the versions of golden set {dataset}").format(dataset=repr(dataset))
        ) as connection:
            rows = connection.execute(query).mappings().all()
        return [GoldenVersion.model_validate(dict(row)) for row in rows]

    def golden_names(self) -> list[str]:
        """The names of every golden set, sorted."""
        query = select(golden_versions.c.dataset).distinct().order_by(golden_versions.c.dataset)
        with self._golden_read(_("list golden sets")) as connection:
            return [str(name) for name in connection.execute(query).scalars()]

    def golden_categories(self, dataset: str, version: int | None = None) -> list[str]:
        """Every category ``dataset`` had a case in at any version (up to ``version``), sorted."""
        query = (
            select(golden_changes.c.category)
            .distinct()
            .where(golden_changes.c.dataset == dataset)
            .where(golden_changes.c.version <= (version if version is not None else 2**31 - 1))
            .where(golden_changes.c.action == "add")
            .where(golden_changes.c.category != "")
            .order_by(golden_changes.c.category)
        )
        with self._golden_read(
            _("read the categories of golden set {dataset}").format(dataset=repr(dataset))
        ) as connection:
            return [str(name) for name in connection.execute(query).scalars()]

    # Helpers.

    def _append(
        self,
        connection: Connection,
        dataset: str,
        add: Sequence[Case],
        retire: Mapping[str, str],
        who: str,
        note: str,
    ) -> int:
        _check_name(dataset)
        if not who.strip():
            raise InputError(_("say who changes the golden set (--who, default $USER)"))
        current = self._newest_version(connection, dataset)
        active, _retired = self._replay(connection, dataset, current)
        changes: list[dict[str, Any]] = []
        seen: set[str] = set()
        for case in add:
            if case.id in seen:
                raise InputError(
                    _("case {id} is given twice; give each case its own id").format(
                        id=repr(case.id)
                    )
                )
            seen.add(case.id)
            definition = case.model_dump(mode="json")
            if active.get(case.id) != definition:
                changes.append(_change("add", case.id, case.category, definition, ""))
                active[case.id] = definition
        for case_id, reason in retire.items():
            if case_id in seen:
                raise InputError(
                    _("case {case_id} cannot be added and retired in one version").format(
                        case_id=repr(case_id)
                    )
                )
            if case_id not in active:
                raise InputError(
                    _(
                        "golden set {dataset} has no active case {case_id} to retire; "
                        "`seatrial datasets show {name}` lists its cases"
                    ).format(dataset=repr(dataset), case_id=repr(case_id), name=dataset)
                )
            if not reason.strip():
                raise InputError(
                    _("say why case {case_id} is retired (--reason)").format(case_id=repr(case_id))
                )
            category = str(active.pop(case_id).get("category") or "")
            changes.append(_change("retire", case_id, category, None, reason))
        if not changes:
            if current == 0:
                raise InputError(
                    _("golden set {dataset} would start with no cases; add some").format(
                        dataset=repr(dataset)
                    )
                )
            return current
        version = current + 1
        rows = [
            {**change, "dataset": dataset, "version": version, "position": position}
            for position, change in enumerate(changes)
        ]
        for row in rows:
            row["content_hash"] = change_hash(row)
        version_row: dict[str, Any] = {
            "dataset": dataset,
            "version": version,
            "created_at": time.time(),
            "who": who,
            "note": note,
            "added": sum(1 for c in changes if c["action"] == "add"),
            "retired": sum(1 for c in changes if c["action"] == "retire"),
            "cases": len(active),
            "previous_hash": chain_head(connection, dataset, current),
        }
        version_row["content_hash"] = version_hash(
            version_row, [row["content_hash"] for row in rows], version_row["previous_hash"]
        )
        connection.execute(insert(golden_versions), [version_row])
        connection.execute(insert(golden_changes), rows)
        return version

    def _newest_version(self, connection: Connection, dataset: str) -> int:
        query = select(func.max(golden_versions.c.version)).where(
            golden_versions.c.dataset == dataset
        )
        return int(connection.execute(query).scalar() or 0)

    def _replay(
        self, connection: Connection, dataset: str, version: int
    ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        """Active case id -> definition (in first-added order), and retired id -> reason."""
        query = (
            select(
                golden_changes.c.action,
                golden_changes.c.case_id,
                golden_changes.c.definition,
                golden_changes.c.reason,
            )
            .where(golden_changes.c.dataset == dataset)
            .where(golden_changes.c.version <= version)
            .order_by(golden_changes.c.version, golden_changes.c.position)
        )
        active: dict[str, dict[str, Any]] = {}
        retired: dict[str, str] = {}
        for action, case_id, definition, reason in connection.execute(query):
            if action == "add":
                active[case_id] = definition
                retired.pop(case_id, None)
            else:
                active.pop(case_id, None)
                retired[case_id] = reason
        return active, retired

    def _unknown_set(self, connection: Connection, dataset: str) -> InputError:
        names = connection.execute(
            select(golden_versions.c.dataset).distinct().order_by(golden_versions.c.dataset)
        ).scalars()
        known = ", ".join(str(name) for name in names) or _("none yet")
        return InputError(
            _(
                "no golden set {dataset} in the store at {url} (known: {known}); "
                "`seatrial datasets import {name} FILE` creates it"
            ).format(
                dataset=repr(dataset), url=mask_url(self._engine.url), known=known, name=dataset
            )
        )

    def _golden_write(self, action: str, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in a write transaction, again when another writer took the version."""
        with translated(self._engine.url, action):
            for attempt in itertools.count(1):
                try:
                    with self._writer.begin() as connection:
                        return work(connection)
                except IntegrityError:
                    if attempt >= _APPEND_TRIES:
                        raise
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _golden_write_once(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._writer.begin() as connection:
            yield connection

    @contextmanager
    def _golden_read(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._engine.connect() as connection:
            yield connection


def _change(
    action: str, case_id: str, category: str, definition: dict[str, Any] | None, reason: str
) -> dict[str, Any]:
    return {
        "action": action,
        "case_id": case_id,
        "category": category,
        "definition": definition,
        "reason": reason,
    }


def _check_name(dataset: str) -> None:
    if not dataset.strip() or "@" in dataset or dataset != dataset.strip():
        raise InputError(
            _(
                "{dataset} is not a golden set name: give a non-empty name without "
                "`@` (which separates the version, as in refunds@3) or surrounding "
                "spaces"
            ).format(dataset=repr(dataset))
        )
