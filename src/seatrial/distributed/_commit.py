"""Group commit for a worker: the attempts its threads finish are stored together.

Each pool thread must not acknowledge its message before its attempt is stored, so it waits
for the write; but one transaction per attempt makes the database's commit (its flush to
disk) the worker's limit. A writer thread stores whatever has been handed to it since its
last transaction in one, then wakes every thread whose attempt it held, or hands each the
error. Nothing is acknowledged before its own attempt is committed.
"""

from __future__ import annotations

from dataclasses import dataclass

from seatrial.distributed._grouped import GroupThread, Handed
from seatrial.store import EncodedAttempts, Store

MAX_GROUP = 200
"""Attempts stored in one transaction at most."""


@dataclass
class _Pending(Handed):
    encoded: EncodedAttempts


class GroupCommit(GroupThread[_Pending]):
    """Stores attempts handed from many threads, several per transaction."""

    def __init__(self, store: Store) -> None:
        self._store = store
        super().__init__("seatrial-group-commit", MAX_GROUP)

    def store(self, encoded: EncodedAttempts) -> None:
        """Store ``encoded`` and return once it is committed; raise what the write raised."""
        self.hand(_Pending(encoded=encoded))

    def serve(self, group: list[_Pending]) -> None:
        """Store the group's attempts in one transaction."""
        failure: BaseException | None = None
        try:
            self._store.save_encoded([pending.encoded for pending in group])
        except BaseException as exc:  # handed to every waiting thread, which retries
            failure = exc
        for pending in group:
            pending.served(failure)
