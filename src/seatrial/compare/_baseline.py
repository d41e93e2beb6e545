"""Naming runs to compare: an id or a prefix of one, ``latest``, ``latest-passing``, or a tag.

``latest-passing`` may be narrowed to one branch (a CI tier's baseline is the target branch's
latest passing run). A run's branch is its ``branch:NAME`` tag, else the git branch it
recorded when it started (``settings.git["branch"]``).
"""

from __future__ import annotations

from seatrial.compare._flaky import REPLAY_TAG
from seatrial.compare._runs import load_run
from seatrial.compare._verdict import run_meets_gates
from seatrial.errors import RunNotFound
from seatrial.i18n import gettext as _
from seatrial.record import RunInfo
from seatrial.store import Store

LATEST = "latest"
LATEST_PASSING = "latest-passing"
SEARCHED = 50
"""How many recent runs ``latest-passing`` looks through (of the branch, when one is given)."""
SEARCHED_UNTAGGED = 4 * SEARCHED
"""How many recent runs of the suite are read for a branch recorded only as a git ref (no
``branch:`` tag), when ``latest-passing`` is narrowed to a branch."""
BRANCH_TAG = "branch:"
"""The prefix of the tag naming a run's branch (``branch:main``)."""


def run_branch(info: RunInfo) -> str | None:
    """The branch a run was made from: its ``branch:NAME`` tag, else its recorded git branch."""
    for tag in info.tags:
        if tag.startswith(BRANCH_TAG) and len(tag) > len(BRANCH_TAG):
            return tag[len(BRANCH_TAG) :]
    git = info.settings.git
    branch = git.branch if git is not None else None
    return str(branch) if branch else None


def resolve_run_ref(
    store: Store, ref: str, *, suite: str | None = None, branch: str | None = None
) -> str:
    """The run id ``ref`` names.

    ``latest``: the newest run (of ``suite`` when given). ``latest-passing``: the newest
    finished run (of ``suite`` when given, made from ``branch`` when given) that met its
    gates, regression gates aside (a baseline's own baseline is not looked at). Else a run id
    or a unique prefix of one, else the newest run carrying ``ref`` as a tag. ``branch``
    narrows only ``latest-passing``.
    """
    if ref == LATEST and suite is not None:
        runs = [r for r in store.list_runs(limit=SEARCHED, suite=suite) if REPLAY_TAG not in r.tags]
        if not runs:
            raise RunNotFound(
                _("no run of suite {suite!r} is stored yet, so there is no `latest`").format(
                    suite=suite
                )
            )
        return runs[0].run_id
    if ref == LATEST_PASSING:
        return _latest_passing(store, suite, branch)
    try:
        return store.resolve_run_id(ref)
    except RunNotFound:
        tagged = store.list_runs(limit=1, tag=ref)
        if tagged:
            return tagged[0].run_id
        raise RunNotFound(
            _(
                "no run id, id prefix or tag {ref!r} in the store at {url}; `seatrial runs` "
                "lists the stored runs (`latest` and `latest-passing` also work)"
            ).format(ref=ref, url=store.url)
        ) from None


def _candidates(store: Store, suite: str | None, branch: str | None) -> list[RunInfo]:
    """Recent runs, newest first; with ``branch``, the last ``SEARCHED`` of that branch (found
    by tag, or by the git branch they recorded), however many other branches ran since."""
    if branch is None:
        return store.list_runs(limit=SEARCHED, suite=suite)
    tagged = store.list_runs(limit=SEARCHED, suite=suite, tag=BRANCH_TAG + branch)
    # Runs that recorded their branch only as a git ref cannot be filtered in the query.
    recent = store.list_runs(limit=SEARCHED_UNTAGGED, suite=suite)
    found = {info.run_id: info for info in [*tagged, *recent] if run_branch(info) == branch}
    ordered = sorted(found.values(), key=lambda i: (i.started_at, i.run_id), reverse=True)
    return ordered[:SEARCHED]


def _latest_passing(store: Store, suite: str | None, branch: str | None = None) -> str:
    for info in _candidates(store, suite, branch):
        if info.status != "finished" or REPLAY_TAG in info.tags:
            continue
        # Without a baseline its regression gates are not evaluated: a baseline's own
        # baseline is not looked at.
        if run_meets_gates(load_run(store, info.run_id)).passed:
            return info.run_id
    if suite and branch:
        said = _(
            "no finished run of suite {suite!r} on branch {branch!r} met its gates among the "
            "last {n} runs, so there is no `latest-passing`; name a baseline run id or tag "
            "instead"
        )
    elif suite:
        said = _(
            "no finished run of suite {suite!r} met its gates among the last {n} runs, so "
            "there is no `latest-passing`; name a baseline run id or tag instead"
        )
    elif branch:
        said = _(
            "no finished run on branch {branch!r} met its gates among the last {n} runs, so "
            "there is no `latest-passing`; name a baseline run id or tag instead"
        )
    else:
        said = _(
            "no finished run met its gates among the last {n} runs, so there is no "
            "`latest-passing`; name a baseline run id or tag instead"
        )
    raise RunNotFound(said.format(suite=suite, branch=branch, n=SEARCHED))
