"""Flaky cases: verdicts that disagree across one run's repeats, or across recent runs.

A case whose repeats disagree, or whose verdict changed across the last three runs of the
same agent version, is flaky. Flaky cases are reported on their own and kept out of regression
deltas, never out of hard-constraint gates.
"""

from __future__ import annotations

from seatrial.compare._runs import RunData, load_run
from seatrial.record import RunInfo
from seatrial.store import Store

HISTORY = 3
"""How many runs of the same agent version (this one included) are looked at."""

REPLAY_TAG = "replay"
"""Runs made by ``seatrial rerun`` carry this tag; they are not history."""


def agent_version(info: RunInfo) -> tuple[str, str]:
    """What makes two runs "the same agent version": the agent spec, and the hash of its
    code or its reported version when the run's snapshot has one."""
    snapshot = info.settings.snapshot
    if snapshot is None:
        return info.agent, ""
    return info.agent, snapshot.agent.version or snapshot.agent.code_hash or ""


def history(store: Store, info: RunInfo, runs: int = HISTORY) -> list[RunInfo]:
    """The finished runs of the same suite and agent version started before ``info``,
    newest first, at most ``runs - 1`` of them (``info`` itself is the first of the window)."""
    found: list[RunInfo] = []
    for other in store.list_runs(limit=50, suite=info.suite, agent=info.agent):
        if len(found) >= runs - 1:
            break
        if (
            other.run_id == info.run_id
            or other.started_at > info.started_at
            or other.status != "finished"
            or REPLAY_TAG in other.tags
            or agent_version(other) != agent_version(info)
        ):
            continue
        found.append(other)
    return found


def flaky_cases(store: Store | None, run: RunData, runs: int = HISTORY) -> dict[str, str]:
    """Case id -> why it is flaky. Without a store only the run's own repeats are looked at."""
    found: dict[str, str] = {}
    for case in run.cases:
        if case.mixed:
            found[case.case_id] = f"{case.passes} of {case.n} repeats passed"
    if store is None:
        return found
    earlier: list[RunData] = [
        load_run(store, info.run_id) for info in history(store, run.info, runs)
    ]
    if not earlier:
        return found
    for case in run.cases:
        if case.case_id in found:
            continue
        verdicts = [case.verdict]
        for other in earlier:
            outcome = other.case(case.case_id)
            if outcome is not None:
                verdicts.append(outcome.verdict)
        if len(verdicts) > 1 and len({v == "PASS" for v in verdicts}) > 1:
            found[case.case_id] = (
                f"verdicts {', '.join(verdicts)} over the last {len(verdicts)} runs of this "
                "agent version (newest first)"
            )
    return found
