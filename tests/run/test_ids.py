"""Ids do not repeat when something else seeds Python's ``random`` module, nor across forks.

An in-process agent may call ``random.seed`` for its own reasons, and hypothesis seeds the
module in tests; Seatrial's ids (runs, traces, spans, sessions, attempts) come from
generators of their own.
"""

from __future__ import annotations

import os
import random

from seatrial.run import new_run_id
from seatrial.trace import new_id


def test_seeding_the_random_module_does_not_repeat_run_or_trace_ids() -> None:
    random.seed(7)
    first = (new_run_id(), new_id(), new_id(128))
    random.seed(7)
    second = (new_run_id(), new_id(), new_id(128))
    assert all(a != b for a, b in zip(first, second, strict=True))


def test_a_forked_worker_makes_other_ids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id, then leave at once
        os.write(write, new_id(128).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    os.close(write)
    assert len(child) == 32
    assert child != new_id(128)
