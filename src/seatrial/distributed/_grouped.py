"""One round of a worker's grouping threads: what many threads handed over since the last.

:class:`~seatrial.distributed._commit.GroupCommit` (stores attempts) and
:class:`~seatrial.distributed._lookup.GroupLookup` (asks whether attempts are stored) each
serve many pool threads with one thread that does one database round per group; both take
their groups here.
"""

from __future__ import annotations

import queue
from typing import TypeVar

T = TypeVar("T")


def take_group(handed: queue.SimpleQueue[T | None], most: int) -> tuple[list[T], bool]:
    """Wait for the first item, then take what else is waiting, up to ``most`` items.

    Returns the group and whether ``None`` (the signal to stop) was among what was handed:
    the items taken before it are still served.
    """
    group: list[T] = []
    item = handed.get()
    while item is not None:
        group.append(item)
        if len(group) >= most:
            return group, False
        try:
            item = handed.get_nowait()
        except queue.Empty:
            return group, False
    return group, True
