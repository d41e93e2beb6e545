"""A benchmark's stored shape: its id, how its runs are linked, and its leaderboard.

``seatrial bench`` runs one suite once per agent; each run stores the benchmark under
``settings.bench`` (its id, the agent's name as given, its position, every agent of the
benchmark) and carries the tag ``bench:ID``, so the runs are found again by the tag and
``seatrial bench --show ID`` and the dashboard rebuild the same leaderboard from the store.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from seatrial.compare._leaderboard import ALPHA, BoardRun, Leaderboard, rank_runs
from seatrial.errors import RunNotFound
from seatrial.i18n import gettext as _
from seatrial.store import AgentRun, RunQuery, Store, runs_matching

BENCH_TAG_PREFIX = "bench:"
"""The tag every run of a benchmark carries is this prefix and the benchmark's id."""

_MOST_AGENTS = 1000
"""More runs than a benchmark has agents: how many tagged runs are read."""


def bench_tag(bench_id: str) -> str:
    """The tag linking the runs of a benchmark: ``bench:ID``."""
    return f"{BENCH_TAG_PREFIX}{bench_id}"


def new_bench_id() -> str:
    """A sortable benchmark id: UTC time plus a random suffix from the operating system."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f"-{secrets.token_hex(3)}"


def bench_record(bench_id: str, agents: list[str], position: int) -> dict[str, Any]:
    """What one run of a benchmark stores under ``settings.bench``: the benchmark's id,
    its agents in the order given, and which of them (``position``, from 0) this run is."""
    return {"id": bench_id, "agents": list(agents), "agent": agents[position], "position": position}


def bench_leaderboard(store: Store, bench_id: str, alpha: float = ALPHA) -> Leaderboard:
    """The leaderboard of benchmark ``bench_id``, from its runs as stored.

    Each agent's row comes from the run that carries its name in ``settings.bench`` (the
    newest, should two). Raises :class:`seatrial.errors.RunNotFound` when no run carries the
    tag ``bench:ID``.
    """
    found = runs_matching(store, RunQuery(tag=bench_tag(bench_id)), limit=_MOST_AGENTS)
    if not found:
        raise RunNotFound(
            _(
                "no benchmark {bench_id!r} in the store at {url}: no run is tagged {tag!r}; "
                "`seatrial runs` lists the stored runs and their tags"
            ).format(bench_id=bench_id, url=store.url, tag=bench_tag(bench_id))
        )
    picked: dict[str, BoardRun] = {}
    order: dict[str, int] = {}
    for info in found:  # newest first: the first run of a name wins
        bench = info.settings.bench
        name = str((bench.agent if bench is not None else None) or info.agent)
        if name not in picked:
            run = AgentRun(info.run_id, info.agent, info.started_at, info.settings)
            picked[name] = BoardRun(name, run)
            position = bench.position if bench is not None else None
            order[name] = int(len(order) if position is None else position)
    chosen = sorted(picked.values(), key=lambda board: order[board.name])
    return rank_runs(store, chosen, found[0].suite, bench_id=bench_id, alpha=alpha)
