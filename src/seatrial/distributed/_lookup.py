"""Group look-up for a worker: is a delivered attempt stored already?

Every pool thread asks before it runs an attempt (a delivery of a stored attempt must not
call the agent again). One query per thread made each worker of a hundred threads churn
through its connection pool (five kept, the rest opened and closed per query) and cost about
1.5 ms of CPU per attempt; here one thread answers every question asked since its last
query with one query per run, the way :class:`~seatrial.distributed._commit.GroupCommit`
stores attempts.
"""

from __future__ import annotations

import queue
import threading
from collections import defaultdict
from dataclasses import dataclass, field

from seatrial.distributed._grouped import take_group
from seatrial.store import Store

MAX_GROUP = 500
"""Questions answered by one round of queries at most."""


@dataclass
class _Question:
    run_id: str
    key: tuple[str, int]
    done: threading.Event = field(default_factory=threading.Event)
    stored: bool = False
    failure: BaseException | None = None


class GroupLookup:
    """Answers "is this attempt stored?" from many threads, many per query."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[_Question | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="seatrial-lookup", daemon=True)
        self._thread.start()

    def stored(self, run_id: str, case_id: str, attempt: int) -> bool:
        """Whether the attempt is stored; raise what the read raised."""
        question = _Question(run_id, (case_id, attempt))
        self._queue.put(question)
        question.done.wait()
        if question.failure is not None:
            raise question.failure
        return question.stored

    def close(self) -> None:
        """Answer what was asked, then stop the thread."""
        self._queue.put(None)
        self._thread.join(30)

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            group, stopping = take_group(self._queue, MAX_GROUP)
            by_run: dict[str, list[_Question]] = defaultdict(list)
            for question in group:
                by_run[question.run_id].append(question)
            for run_id, questions in by_run.items():
                try:
                    found = self._store.stored_among(run_id, [q.key for q in questions])
                except BaseException as exc:  # handed to every waiting thread
                    for question in questions:
                        question.failure = exc
                else:
                    for question in questions:
                        question.stored = question.key in found
                for question in questions:
                    question.done.set()
