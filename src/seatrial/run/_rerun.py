"""The Time Machine: re-run a stored attempt from its snapshot and diff the two trajectories.

:func:`prepare_rerun` reads the stored attempt, its case as it was run and its run's
snapshot, and resolves the agent from the stored spec; the front door
(``seatrial._execute``, as for ``seatrial run``) runs that one case once as a new stored run
(tag ``replay``); :meth:`RerunSetup.result` aligns the new trajectory with the stored one.
When the stored run recorded its model answers in a cassette, the gateway serves them back
(strict: a request that differs from the recorded one fails at once, naming the first
difference), so an unchanged agent reproduces the attempt step for step and a changed one
diverges where it asks something new. ``live=True`` runs the current agent against the live
models instead, to see whether a fix holds. What changed since the snapshot is listed, never
a reason to refuse.

``rerun_attempt`` and ``rerun_attempt_async`` are named here, where the docs have always
named them, and live with the front door they call (``seatrial._execute._rerun``).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from seatrial.agent import AgentAdapter, resolve_agent
from seatrial.case import Case, Suite
from seatrial.compare import (
    REPLAY_TAG,
    AttemptRef,
    TraceDiff,
    diff_attempts,
    load_attempt,
    parse_attempt_ref,
)
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, AttemptSnapshot, RunInfo, RunSnapshot
from seatrial.run._changes import (
    SnapshotChange,
    attempt_changes,
    gateway_changes,
    run_changes,
    suite_changes,
)
from seatrial.run._rerun_plan import (
    RerunMode,
    RerunPlan,
    rerun_gateway,
    rerun_plan,
    run_snapshot_of,
)
from seatrial.run._runner import RunOptions, new_run_id
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.config import Config
    from seatrial.gateway import GatewayServer


@dataclass
class RerunResult:
    """A rerun attempt: the new run, what changed since the snapshot, and the diff."""

    source: AttemptRef
    """The stored attempt that was run again."""
    run_id: str
    """The new run holding the rerun attempt (attempt 1 of the same case)."""
    mode: RerunMode
    """How model answers were served."""
    live: bool
    """The rerun was asked to run live (``--live``)."""
    stored: AttemptRecord
    """The stored attempt, with its trace."""
    replayed: AttemptRecord
    """The new attempt, with its trace."""
    diff: TraceDiff
    """The stored trajectory (A) aligned with the new one (B)."""
    changes: list[SnapshotChange] = field(default_factory=list)
    """What is not as it was when the attempt was stored."""
    notes: list[str] = field(default_factory=list)
    """What the reader should know about how the rerun ran."""
    cassette: str | None = None
    """The cassette file the answers came from (cassette mode)."""
    mismatch: str | None = None
    """The gateway's words for the first request that differed from the recording."""

    @property
    def reproduced(self) -> bool:
        """The new trajectory is the stored one, step for step."""
        return self.diff.identical

    @property
    def exit_code(self) -> int:
        """0 reproduced (live: the new attempt passes), else 1."""
        if self.live:
            return 0 if self.replayed.verdict == "PASS" else 1
        return 0 if self.reproduced else 1

    def to_dict(self) -> dict[str, Any]:
        """JSON: the source, the new run, verdicts, changes, notes and the diff."""
        return {
            "source": {
                "run_id": self.source.run_id,
                "case_id": self.source.case_id,
                "attempt": self.source.attempt,
            },
            "run_id": self.run_id,
            "mode": self.mode,
            "live": self.live,
            "reproduced": self.reproduced,
            "exit_code": self.exit_code,
            "verdict": {"stored": self.stored.verdict, "replayed": self.replayed.verdict},
            "changes": [change.to_dict() for change in self.changes],
            "notes": list(self.notes),
            "cassette": self.cassette,
            "mismatch": self.mismatch,
            "diff": self.diff.to_dict(),
        }


def _case_of(store: Store, ref: AttemptRef) -> Case:
    for case in store.run_cases(ref.run_id):
        if case.id == ref.case_id:
            return case
    raise InputError(
        _(
            "run {run_id} holds no definition of case {case_id!r} (an imported run?), so it "
            "cannot be run again"
        ).format(run_id=ref.run_id, case_id=ref.case_id)
    )


def _mismatch(result: AttemptRecord, diff: TraceDiff) -> str | None:
    """The status message of the new side's first divergent model call, when it failed."""
    step = diff.first.b if diff.first is not None else None
    if step is None or step.kind != "model_call" or result.trace is None:
        return None
    for span in result.trace.spans:
        if span.span_id == step.span_id and span.status == "error":
            return span.status_message or None
        if span.span_id == step.span_id:
            return None
    return None


def _changes(
    info: RunInfo,
    snapshot: RunSnapshot | None,
    new_info: RunInfo,
    stored: AttemptRecord,
    replayed: AttemptRecord,
    case: Case,
    config: Config,
) -> tuple[list[SnapshotChange], list[str]]:
    changes, notes = suite_changes(info.suite_path, case)
    now = run_snapshot_of(new_info)
    if snapshot is not None and now is not None:
        changes = run_changes(snapshot, now) + changes
        changes += gateway_changes(snapshot, config.gateway_config())
    if stored.snapshot is None:
        notes.append(
            _(
                "the attempt was stored before Seatrial kept snapshots: what changed in the "
                "agent, the fixture and the models cannot be told"
            )
        )
    else:
        changes += attempt_changes(stored.snapshot, replayed.snapshot or AttemptSnapshot())
    return changes, notes


@dataclass
class RerunSetup:
    """A rerun ready to go: the one-case suite, its agent, options and gateway.

    The front door (``seatrial._execute``) runs it, as it runs ``seatrial run``, and
    :meth:`result` reads the new attempt back and diffs it with the stored one.
    """

    source: AttemptRef
    info: RunInfo
    stored: AttemptRecord
    case: Case
    snapshot: RunSnapshot | None
    plan: RerunPlan
    live: bool
    suite: Suite
    adapter: AgentAdapter
    options: RunOptions

    @property
    def run_id(self) -> str:
        """The new run's id, fixed before it starts (its gateway serves answers to it)."""
        assert self.options.run_id is not None
        return self.options.run_id

    def gateway(
        self, store: Store, config: Config
    ) -> AbstractAsyncContextManager[GatewayServer | None]:
        """The plan's gateway for the new run (:func:`rerun_gateway`)."""
        return rerun_gateway(self.plan, store, config, self.run_id, self.case.id)

    def result(self, store: Store, config: Config) -> RerunResult:
        """The new attempt, read back, diffed with the stored one; what changed since."""
        ref, stored, case = self.source, self.stored, self.case
        replayed = load_attempt(store, AttemptRef(self.run_id, case.id, 1))
        diff = diff_attempts(stored, replayed)
        new_info = store.get_run(self.run_id)
        changes, notes = _changes(
            self.info, self.snapshot, new_info, stored, replayed, case, config
        )
        return RerunResult(
            source=ref,
            run_id=self.run_id,
            mode=self.plan.mode,
            live=self.live,
            stored=stored,
            replayed=replayed,
            diff=diff,
            changes=changes,
            notes=self.plan.notes + notes,
            cassette=str(self.plan.cassette) if self.plan.cassette is not None else None,
            mismatch=_mismatch(replayed, diff),
        )


def prepare_rerun(
    store: Store, ref: AttemptRef | str, *, config: Config, live: bool = False
) -> RerunSetup:
    """Read the stored attempt, its case and its run's snapshot; plan how model answers are
    served; resolve the agent as the run resolved it. Nothing is run or stored yet.

    ``ref`` is an :class:`AttemptRef` or text as ``seatrial rerun`` takes it
    (``RUN:CASE#N``). Raises :class:`InputError` (exit 2) for an unknown attempt, an agent
    that cannot be resolved, or a recorded run whose cassette is gone.
    """
    if isinstance(ref, str):
        ref = parse_attempt_ref(store, ref)
    info = store.get_run(ref.run_id)
    stored = load_attempt(store, ref)
    case = _case_of(store, ref)
    snapshot = run_snapshot_of(info)
    plan = rerun_plan(config, info, snapshot, stored, live)
    # Resolved as the run resolved it (the front door's agent_for): with the configured
    # models, or a `model:` agent would describe itself by its name instead of the pinned id
    # it stands for, and every rerun would list an agent model change that did not happen.
    adapter: AgentAdapter = resolve_agent(
        info.agent,
        agents=config.agents,
        base_dir=config.project_dir,
        agents_dir=config.project_dir,
        concurrency=1,
        timeout_s=info.settings.timeout_s,
        models=config.models,
    )
    options = RunOptions(
        repeats=1,
        concurrency=1,
        timeout_s=info.settings.timeout_s,
        tags=[REPLAY_TAG],
        run_id=new_run_id(),
        settings={
            "replay_of": {"run_id": ref.run_id, "case_id": ref.case_id, "attempt": ref.attempt},
            "mode": plan.mode,
        },
    )
    suite = Suite(
        name=info.suite,
        path=info.suite_path,
        cases=[case],
        rubrics=dict(info.settings.rubrics),
    )
    return RerunSetup(ref, info, stored, case, snapshot, plan, live, suite, adapter, options)
