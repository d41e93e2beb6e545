"""Group look-up for a worker: is a delivered attempt stored already?

Every pool thread asks before it runs an attempt (a delivery of a stored attempt must not
call the agent again). One query per thread made each worker of a hundred threads churn
through its connection pool (five kept, the rest opened and closed per query) and cost about
1.5 ms of CPU per attempt; here one thread answers every question asked since its last
query with one query per run, the way :class:`~seatrial.distributed._commit.GroupCommit`
stores attempts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from seatrial.distributed._grouped import GroupThread, Handed
from seatrial.store import Store

MAX_GROUP = 500
"""Questions answered by one round of queries at most."""


@dataclass
class _Question(Handed):
    run_id: str
    key: tuple[str, int]
    stored: bool = False


class GroupLookup(GroupThread[_Question]):
    """Answers "is this attempt stored?" from many threads, many per query."""

    def __init__(self, store: Store) -> None:
        self._store = store
        super().__init__("seatrial-lookup", MAX_GROUP)

    def stored(self, run_id: str, case_id: str, attempt: int) -> bool:
        """Whether the attempt is stored; raise what the read raised."""
        return self.hand(_Question(run_id=run_id, key=(case_id, attempt))).stored

    def serve(self, group: list[_Question]) -> None:
        """Answer the group's questions with one query per run."""
        by_run: dict[str, list[_Question]] = defaultdict(list)
        for question in group:
            by_run[question.run_id].append(question)
        for run_id, questions in by_run.items():
            failure: BaseException | None = None
            try:
                found = self._store.stored_among(run_id, [q.key for q in questions])
            except BaseException as exc:  # handed to every waiting thread
                failure = exc
            else:
                for question in questions:
                    question.stored = question.key in found
            for question in questions:
                question.served(failure)
