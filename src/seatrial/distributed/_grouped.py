"""A worker's grouping threads: one thread serves what many pool threads handed over since
its last round, in one database round.

:class:`~seatrial.distributed._commit.GroupCommit` (stores attempts) and
:class:`~seatrial.distributed._lookup.GroupLookup` (asks whether attempts are stored) are
both a :class:`GroupThread`; each says only how it serves one group. Its groups are taken
as the runner's writer takes its own (:func:`seatrial.run.take_group`), without the wait.
"""

from __future__ import annotations

import queue
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from seatrial.run import take_group


@dataclass(kw_only=True)
class Handed:
    """One item a pool thread handed over and waits on until it is served."""

    done: threading.Event = field(default_factory=threading.Event)
    failure: BaseException | None = None
    """What serving its group raised; the pool thread raises it."""

    def served(self, failure: BaseException | None = None) -> None:
        """Wake the pool thread waiting on this item, with ``failure`` when serving failed."""
        self.failure = failure
        self.done.set()


H = TypeVar("H", bound=Handed)


class GroupThread(ABC, Generic[H]):
    """One thread that serves items handed from many threads, up to ``most`` per round."""

    def __init__(self, name: str, most: int) -> None:
        self._most = most
        self._queue: queue.SimpleQueue[H | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def hand(self, item: H) -> H:
        """Hand ``item`` over and return it once served; raise what serving it raised."""
        self._queue.put(item)
        item.done.wait()
        if item.failure is not None:
            raise item.failure
        return item

    def close(self) -> None:
        """Serve what was handed over, then stop the thread."""
        self._queue.put(None)
        self._thread.join(30)

    @abstractmethod
    def serve(self, group: list[H]) -> None:
        """Serve ``group`` (one round), calling :meth:`Handed.served` on every item."""

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            group, stopping = take_group(self._queue, self._most)
            if group:
                self.serve(group)
