"""Naming runs to compare: an id or a prefix of one, ``latest``, ``latest-passing``, or a tag."""

from __future__ import annotations

from seatrial.compare._flaky import REPLAY_TAG
from seatrial.compare._runs import load_run
from seatrial.compare._verdict import run_meets_gates
from seatrial.errors import RunNotFound
from seatrial.store import Store

LATEST = "latest"
LATEST_PASSING = "latest-passing"
SEARCHED = 50
"""How many recent runs ``latest-passing`` looks through."""


def resolve_run_ref(store: Store, ref: str, *, suite: str | None = None) -> str:
    """The run id ``ref`` names.

    ``latest``: the newest run (of ``suite`` when given). ``latest-passing``: the newest
    finished run (of ``suite`` when given) that met its gates, regression gates aside (a
    baseline's own baseline is not looked at). Else a run id or a unique prefix of one, else
    the newest run carrying ``ref`` as a tag.
    """
    if ref == LATEST and suite is not None:
        runs = [r for r in store.list_runs(limit=SEARCHED, suite=suite) if REPLAY_TAG not in r.tags]
        if not runs:
            raise RunNotFound(f"no run of suite {suite!r} is stored yet, so there is no `latest`")
        return runs[0].run_id
    if ref == LATEST_PASSING:
        return _latest_passing(store, suite)
    try:
        return store.resolve_run_id(ref)
    except RunNotFound:
        tagged = store.list_runs(limit=1, tag=ref)
        if tagged:
            return tagged[0].run_id
        raise RunNotFound(
            f"no run id, id prefix or tag {ref!r} in the store at {store.url}; `seatrial runs` "
            "lists the stored runs (`latest` and `latest-passing` also work)"
        ) from None


def _latest_passing(store: Store, suite: str | None) -> str:
    for info in store.list_runs(limit=SEARCHED, suite=suite):
        if info.status != "finished" or REPLAY_TAG in info.tags:
            continue
        # Without a baseline its regression gates are not evaluated: a baseline's own
        # baseline is not looked at.
        if run_meets_gates(load_run(store, info.run_id)).passed:
            return info.run_id
    which = f"of suite {suite!r} " if suite else ""
    raise RunNotFound(
        f"no finished run {which}met its gates among the last {SEARCHED} runs, so there is no "
        "`latest-passing`; name a baseline run id or tag instead"
    )
