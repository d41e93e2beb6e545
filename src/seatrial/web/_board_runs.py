"""Which runs the leaderboard and coverage pages read: suites, and the newest runs of one.

Every query here touches the ``runs`` (and ``run_tags``) table only, through its
``(suite, started_at)`` index, so it stays cheap with thousands of runs in the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Engine

from seatrial.compare import REPLAY_TAG
from seatrial.store._schema import run_tags, runs


@dataclass(frozen=True)
class PickedRun:
    """A run chosen for a board: its id, agent, start time and settings."""

    run_id: str
    agent: str
    started_at: float
    settings: dict[str, Any]


def suites(engine: Engine) -> list[str]:
    """Every suite with a stored run, by name."""
    with engine.connect() as connection:
        rows = connection.execute(select(runs.c.suite).distinct().order_by(runs.c.suite))
        return [str(name) for name in rows.scalars()]


def newest_suite(engine: Engine) -> str | None:
    """The suite of the newest run; None for an empty store."""
    query = select(runs.c.suite).order_by(runs.c.started_at.desc()).limit(1)
    with engine.connect() as connection:
        name = connection.execute(query).scalar()
    return None if name is None else str(name)


def _not_replay() -> Any:
    replays = select(run_tags.c.run_id).where(run_tags.c.tag == REPLAY_TAG)
    return runs.c.run_id.not_in(replays)


def newest_per_agent(engine: Engine, suite: str) -> list[PickedRun]:
    """For each agent, its newest finished run of ``suite`` (replays of flaky cases left out)."""
    newest = (
        select(runs.c.agent, func.max(runs.c.started_at).label("started_at"))
        .where(runs.c.suite == suite, runs.c.status == "finished", _not_replay())
        .group_by(runs.c.agent)
        .subquery()
    )
    query = (
        select(runs.c.run_id, runs.c.agent, runs.c.started_at, runs.c.settings)
        .join(
            newest,
            and_(runs.c.agent == newest.c.agent, runs.c.started_at == newest.c.started_at),
        )
        .where(runs.c.suite == suite, runs.c.status == "finished", _not_replay())
        .order_by(runs.c.agent, runs.c.run_id)
    )
    picked: dict[str, PickedRun] = {}
    with engine.connect() as connection:
        for row in connection.execute(query):
            # Two runs of one agent started in the same instant: keep one, deterministically.
            picked.setdefault(
                row.agent, PickedRun(row.run_id, row.agent, row.started_at, row.settings or {})
            )
    return list(picked.values())


def newest_run(engine: Engine, suite: str) -> str | None:
    """The newest finished run of ``suite`` (the newest of any status if none finished)."""
    for finished in (True, False):
        query = select(runs.c.run_id).where(runs.c.suite == suite, _not_replay())
        if finished:
            query = query.where(runs.c.status == "finished")
        query = query.order_by(runs.c.started_at.desc()).limit(1)
        with engine.connect() as connection:
            run_id = connection.execute(query).scalar()
        if run_id is not None:
            return str(run_id)
    return None


def suite_of(engine: Engine, run_id: str) -> str | None:
    """The suite a run belongs to."""
    with engine.connect() as connection:
        name = connection.execute(select(runs.c.suite).where(runs.c.run_id == run_id)).scalar()
    return None if name is None else str(name)
