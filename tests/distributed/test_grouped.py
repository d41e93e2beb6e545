"""A worker's grouping threads take what was handed over since their last round."""

from __future__ import annotations

import queue

from seatrial.distributed._grouped import take_group


def test_a_group_takes_what_is_waiting_up_to_its_size() -> None:
    handed: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for number in range(5):
        handed.put(number)

    assert take_group(handed, 3) == ([0, 1, 2], False)
    assert take_group(handed, 3) == ([3, 4], False)


def test_the_items_handed_before_the_stop_signal_are_still_served() -> None:
    handed: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    handed.put(1)
    handed.put(2)
    handed.put(None)

    assert take_group(handed, 10) == ([1, 2], True)
