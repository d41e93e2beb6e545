"""The hash chain of a golden set's history, and checking it.

Like git's commits, every golden-set version stores a SHA-256 of what it holds and the hash
of the version before it, so a row changed directly in the database is found: each change
row (a case added, edited or retired) stores the hash of its content, and each version row
stores the hash of its own fields, its changes' hashes in order, and the previous version's
hash. Recomputing them all (:meth:`ChainMixin.golden_verify`) names the first thing that no
longer matches: the case whose definition was edited, the version whose note or counts were,
a version missing from the chain.

The hash is over a canonical JSON text (keys sorted, no spaces, text as written), so SQLite
and PostgreSQL (whose JSONB reorders keys and writes ``1.0`` back as ``1``) give the same
hash for the same content. Changing what is hashed changes every stored hash: add a new
:data:`CHAIN_FORMAT` and a migration that rewrites the chain, never edit these functions.
The migration that introduced the chain (0009) calls them for the sets written before it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from seatrial.i18n import gettext as _
from seatrial.store._schema import golden_changes, golden_versions
from seatrial.store._translate import translated

CHAIN_FORMAT = "seatrial.golden.v1"
"""What a golden hash is computed over; part of every hashed text."""

CHANGE_FIELDS = ("dataset", "version", "position", "action", "case_id", "category", "reason")
"""The columns of a change row its hash covers, besides the definition."""

VERSION_FIELDS = ("dataset", "version", "created_at", "who", "note", "added", "retired", "cases")
"""The columns of a version row its hash covers, besides its changes and the previous hash."""


class ChainProblem(BaseModel):
    """One thing in a golden set's stored history that its hash chain does not vouch for."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    """The golden set."""
    version: int
    """The version whose row (or one of whose changes) does not match."""
    case_id: str | None = None
    """The case whose change row was altered; None when the version row itself was."""
    what: str
    """What does not match, for people (``the case's stored content``, ``the link to v1``)."""
    expected: str | None
    """The hash recomputed from what is stored now (or the hash the link should have)."""
    stored: str | None
    """The hash stored when the row was written (None: none stored)."""

    @property
    def message(self) -> str:
        """One line naming the set, version, case and both hashes."""
        if self.case_id is None:
            where = f"{self.dataset} v{self.version}"
        else:
            where = _("{dataset} v{version} case {case_id}").format(
                dataset=self.dataset, version=self.version, case_id=self.case_id
            )
        return _(
            "{where}: {what} does not match its hash (expected {expected}, stored {stored})"
        ).format(
            where=where, what=self.what, expected=_short(self.expected), stored=_short(self.stored)
        )


def change_hash(row: Mapping[str, Any]) -> str:
    """The hash of one ``golden_changes`` row (its columns by name)."""
    content = {name: row[name] for name in CHANGE_FIELDS}
    content["definition"] = row["definition"]
    return _digest({"format": CHAIN_FORMAT, "change": content})


def version_hash(row: Mapping[str, Any], changes: Sequence[str], previous: str | None) -> str:
    """The hash of one ``golden_versions`` row, given its changes' hashes in position order
    and the previous version's hash (None for v1)."""
    content = {name: row[name] for name in VERSION_FIELDS}
    content["created_at"] = repr(float(row["created_at"]))
    return _digest(
        {
            "format": CHAIN_FORMAT,
            "version": content,
            "changes": list(changes),
            "previous": previous,
        }
    )


def chain_problems(
    dataset: str, versions: Sequence[Mapping[str, Any]], changes: Sequence[Mapping[str, Any]]
) -> list[ChainProblem]:
    """Every mismatch in one set's rows: ``versions`` in version order, ``changes`` in
    (version, position) order, each as stored (with their hash columns)."""
    problems: list[ChainProblem] = []
    by_version: dict[int, list[str]] = {}
    for change in changes:
        expected = change_hash(change)
        stored = change["content_hash"]
        if stored != expected:
            problems.append(
                ChainProblem(
                    dataset=dataset,
                    version=int(change["version"]),
                    case_id=str(change["case_id"]),
                    what=_change_what(str(change["action"]), change["position"]),
                    expected=expected,
                    stored=stored,
                )
            )
        # The stored hash is what the version vouches for, as a git tree names its blobs:
        # a content edit shows once, at the case; an edit of the hash too, at the version.
        by_version.setdefault(int(change["version"]), []).append(str(stored))
    previous: str | None = None
    for number, version in enumerate(versions, start=1):
        here = int(version["version"])
        if here != number:
            problems.append(
                ChainProblem(
                    dataset=dataset,
                    version=number,
                    what=_("the chain (v{number} is missing; the next stored is v{here})").format(
                        number=number, here=here
                    ),
                    expected=None,
                    stored=None,
                )
            )
        if version["previous_hash"] != previous:
            problems.append(
                ChainProblem(
                    dataset=dataset,
                    version=here,
                    what=_("the link to v{version}").format(version=here - 1)
                    if here > 1
                    else _("the start of the chain"),
                    expected=previous,
                    stored=version["previous_hash"],
                )
            )
        expected = version_hash(version, by_version.pop(here, []), version["previous_hash"])
        if version["content_hash"] != expected:
            problems.append(
                ChainProblem(
                    dataset=dataset,
                    version=here,
                    what=_("the version row (who, when, note, counts or its list of changes)"),
                    expected=expected,
                    stored=version["content_hash"],
                )
            )
        previous = version["content_hash"]
    for orphan in sorted(by_version):
        problems.append(
            ChainProblem(
                dataset=dataset,
                version=orphan,
                what=_("changes of a version that has no version row"),
                expected=None,
                stored=None,
            )
        )
    return problems


def read_chain(
    connection: Connection, dataset: str, upto: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One set's version rows and change rows (up to version ``upto``), in chain order."""
    versions = select(golden_versions).where(golden_versions.c.dataset == dataset)
    changes = select(golden_changes).where(golden_changes.c.dataset == dataset)
    if upto is not None:
        versions = versions.where(golden_versions.c.version <= upto)
        changes = changes.where(golden_changes.c.version <= upto)
    version_rows = connection.execute(versions.order_by(golden_versions.c.version)).mappings()
    change_rows = connection.execute(
        changes.order_by(golden_changes.c.version, golden_changes.c.position)
    ).mappings()
    return [dict(row) for row in version_rows], [dict(row) for row in change_rows]


def chain_head(connection: Connection, dataset: str, current: int) -> str | None:
    """The hash the next version links to: version ``current``'s (None before v1)."""
    if current == 0:
        return None
    query = select(golden_versions.c.content_hash).where(
        golden_versions.c.dataset == dataset, golden_versions.c.version == current
    )
    head = connection.execute(query).scalar()
    return None if head is None else str(head)


class ChainMixin:
    """Store methods that check golden sets' hash chains."""

    # Set by Store.__init__; declared here so the methods type-check on their own.
    _engine: Engine

    def golden_verify(self, dataset: str, version: int | None = None) -> list[ChainProblem]:
        """Recompute ``dataset``'s hash chain (up to ``version``); empty when it holds."""
        with (
            translated(
                self._engine.url, _("verify golden set {dataset}").format(dataset=repr(dataset))
            ),
            self._engine.connect() as connection,
        ):
            versions, changes = read_chain(connection, dataset, version)
        return chain_problems(dataset, versions, changes)


def _digest(content: Any) -> str:
    text = json.dumps(
        _canonical(content), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> Any:
    """The same value however the database gave it back: a whole float is an int (JSONB
    writes ``1.0`` back as ``1`` and ``1e20`` as digits)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    return value


def _change_what(action: str, position: Any) -> str:
    """What a changed change row was, in the reader's language: ``the add of this case``."""
    if action == "add":
        text = _("the add of this case (change {position})")
    elif action == "edit":
        text = _("the edit of this case (change {position})")
    elif action == "retire":
        text = _("the retire of this case (change {position})")
    else:
        return f"the {action} of this case (change {position})"
    return text.format(position=position)


def _short(digest: str | None) -> str:
    return digest[:12] if digest else _("none")
