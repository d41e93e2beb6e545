"""Cases that stopped discriminating: always passing (graduate them) or never (review them).

Read over the last N finished runs of a suite, from verdict counts the database groups, so a
window of 20 runs of 1,000 cases costs one query, not 20,000 records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from seatrial.compare._flaky import REPLAY_TAG
from seatrial.errors import InputError, RunNotFound
from seatrial.i18n import gettext as _
from seatrial.record import RunInfo
from seatrial.store import Store

MIN_RUNS = 2
"""A case must appear in at least this many runs of the window to be listed: one run says
nothing about a trend."""


@dataclass(frozen=True)
class StaleCase:
    """One listed case and the evidence for listing it."""

    case_id: str
    name: str
    category: str
    runs: int
    """Runs of the window the case appears in."""
    attempts: int
    """Its attempts over those runs."""
    passed: int
    """Of those, how many passed."""
    verdicts: dict[str, int]
    """Attempts per verdict over those runs."""
    oldest_run_id: str
    """The oldest run of the window the case appears in: how far back the evidence goes."""
    oldest_started_at: float


@dataclass(frozen=True)
class StaleReport:
    """Graduate and review candidates over the last runs of one suite."""

    suite: str
    agent: str | None
    asked: int
    """How many runs were asked for (``--last``)."""
    run_ids: tuple[str, ...]
    """The runs read, newest first."""
    graduate: tuple[StaleCase, ...]
    """Cases that passed every attempt of every run of the window they appear in."""
    review: tuple[StaleCase, ...]
    """Cases with no passing attempt in the window."""
    too_few_runs: tuple[str, ...]
    """Cases of the newest run that appear in fewer than :data:`MIN_RUNS` runs."""
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "suite": self.suite,
            "agent": self.agent,
            "asked": self.asked,
            "runs": len(self.run_ids),
            "run_ids": list(self.run_ids),
            "min_runs": MIN_RUNS,
            "graduate": [asdict(case) for case in self.graduate],
            "review": [asdict(case) for case in self.review],
            "too_few_runs": list(self.too_few_runs),
            "notes": list(self.notes),
        }


def stale_cases(
    store: Store, *, suite: str, last: int = 20, agent: str | None = None
) -> StaleReport:
    """Over the last ``last`` finished runs of ``suite`` (of ``agent``, when given; replay
    runs skipped), the cases that always passed and those that never passed.

    Only cases of the newest of those runs are listed: a case no longer in the suite has
    already left the golden set.
    """
    if last < 1:
        raise InputError(_("--last {last}: give at least 1 run").format(last=last))
    window = [
        info
        for info in store.list_runs(limit=None, suite=suite, agent=agent)
        if info.status == "finished" and REPLAY_TAG not in info.tags
    ][:last]
    if not window:
        said = (
            _(
                "no finished run of suite {suite!r} with agent {agent!r} is stored (replay runs "
                "are skipped); `seatrial runs` lists the stored runs and their suites"
            )
            if agent
            else _(
                "no finished run of suite {suite!r} is stored (replay runs are skipped); "
                "`seatrial runs` lists the stored runs and their suites"
            )
        )
        raise RunNotFound(said.format(suite=suite, agent=agent))
    run_ids = [info.run_id for info in window]
    counts = store.case_verdict_counts(run_ids)
    cases = store.run_cases(run_ids[0])
    graduate: list[StaleCase] = []
    review: list[StaleCase] = []
    thin: list[str] = []
    for case in cases:
        seen = [
            (info, counts[info.run_id][case.id])
            for info in window
            if case.id in counts[info.run_id]
        ]
        if len(seen) < MIN_RUNS:
            thin.append(case.id)
            continue
        listed = _evidence(case.id, case.name, case.category, seen)
        if listed.passed == listed.attempts:
            graduate.append(listed)
        elif listed.passed == 0:
            review.append(listed)
    notes = []
    if len(window) < last:
        stored = "1 finished run is" if len(window) == 1 else f"{len(window)} finished runs are"
        notes.append(f"only {stored} stored, fewer than the {last} asked: all were read")
    if thin:
        notes.append(
            f"{len(thin)} cases appear in fewer than {MIN_RUNS} of these runs and are not judged"
        )
    return StaleReport(
        suite=suite,
        agent=agent,
        asked=last,
        run_ids=tuple(run_ids),
        graduate=tuple(graduate),
        review=tuple(review),
        too_few_runs=tuple(thin),
        notes=tuple(notes),
    )


def _evidence(
    case_id: str, name: str, category: str, seen: Sequence[tuple[RunInfo, Mapping[str, int]]]
) -> StaleCase:
    verdicts: dict[str, int] = {}
    for _run, run_counts in seen:
        for verdict, count in run_counts.items():
            verdicts[verdict] = verdicts.get(verdict, 0) + count
    oldest = seen[-1][0]
    return StaleCase(
        case_id=case_id,
        name=name,
        category=category,
        runs=len(seen),
        attempts=sum(verdicts.values()),
        passed=verdicts.get("PASS", 0),
        verdicts=dict(sorted(verdicts.items())),
        oldest_run_id=oldest.run_id,
        oldest_started_at=oldest.started_at,
    )
