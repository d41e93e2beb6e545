"""Executing a suite: scheduling, repeats, timeouts, fixtures, fresh users, resume.

A rerun is planned here (``prepare_rerun``) and run through the front door:
``seatrial.rerun_attempt`` and ``rerun_attempt_async`` (``seatrial._execute``).
"""

from seatrial.run._attempt import run_attempt
from seatrial.run._changes import SnapshotChange
from seatrial.run._context import active_gateway, use_gateway
from seatrial.run._gateway_hook import (
    attempt_gateway,
    gateway_for_run,
    gateway_in_process,
    gateway_record,
    worker_gateway_config,
)
from seatrial.run._git import GitRefs, git_refs, git_settings, pull_request_target
from seatrial.run._judge_hook import JudgeRuntime
from seatrial.run._placement import Placement, pinned_here, placement
from seatrial.run._plan import CasePlan, plan_cases
from seatrial.run._progress import PlainProgress, RichProgress, progress_for
from seatrial.run._rerun import RerunResult, RerunSetup, prepare_rerun
from seatrial.run._rerun_plan import RerunMode
from seatrial.run._run_settings import new_run_settings, suite_hash
from seatrial.run._runner import (
    Dispatch,
    Progress,
    RunOptions,
    RunOutcome,
    new_run_id,
    resume_async,
    run_suite_async,
)
from seatrial.run._simulator import (
    STOP_TOKEN,
    SimulatedUser,
    simulator_prompt,
    with_simulator_models,
)
from seatrial.run._snapshot import case_hash, fixture_hash
from seatrial.run._workers import can_fork
from seatrial.run._writer import take_group

__all__ = [
    "STOP_TOKEN",
    "CasePlan",
    "Dispatch",
    "GitRefs",
    "JudgeRuntime",
    "Placement",
    "PlainProgress",
    "Progress",
    "RerunMode",
    "RerunResult",
    "RerunSetup",
    "RichProgress",
    "RunOptions",
    "RunOutcome",
    "SimulatedUser",
    "SnapshotChange",
    "active_gateway",
    "attempt_gateway",
    "can_fork",
    "case_hash",
    "fixture_hash",
    "gateway_for_run",
    "gateway_in_process",
    "gateway_record",
    "git_refs",
    "git_settings",
    "new_run_id",
    "new_run_settings",
    "pinned_here",
    "placement",
    "plan_cases",
    "prepare_rerun",
    "progress_for",
    "pull_request_target",
    "resume_async",
    "run_attempt",
    "run_suite_async",
    "simulator_prompt",
    "suite_hash",
    "take_group",
    "use_gateway",
    "with_simulator_models",
    "worker_gateway_config",
]
