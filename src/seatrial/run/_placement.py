"""Where a run's attempts run, decided in one place for the runner and the front door.

Three places: sent elsewhere (a ``Dispatch``: Celery workers), shared between forked worker
processes of this machine (``--workers``), or here, on this process's event loop. A run with
an LLM judge or a gateway proxy (``--gateway``, or simulated users talking to an agent that
may call the proxy) stays here whatever ``--workers`` asks: the judge's connections and its
review queue, and the proxy's socket, belong to this process. A gateway without a proxy (a
``model:`` agent calls it in process) does not: each worker opens its own.
"""

from __future__ import annotations

from typing import Literal

from seatrial.run._workers import can_fork

Placement = Literal["dispatch", "workers", "here"]
"""Where a run's attempts run."""

Pin = Literal["judge", "gateway"]
"""What keeps a run's attempts in this process (``gateway``: its proxy)."""


def pinned_here(*, judge: bool, gateway: bool) -> Pin | None:
    """What keeps a run in this process (the judge first), or None when nothing does;
    ``gateway`` is whether a proxy serves the run."""
    if judge:
        return "judge"
    if gateway:
        return "gateway"
    return None


def placement(
    *, workers: int, attempts: int, dispatch: bool, judge: bool, gateway: bool
) -> Placement:
    """Where ``attempts`` attempts run: a dispatch takes them all; more than one worker and
    attempt forks workers where the platform can and nothing keeps the run here."""
    if dispatch:
        return "dispatch"
    if (
        workers > 1
        and attempts > 1
        and can_fork()
        and pinned_here(judge=judge, gateway=gateway) is None
    ):
        return "workers"
    return "here"
