"""tau2 tasks: which one each simulation ran, the case each becomes, and what a simulation's
reward says in Seatrial's terms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from seatrial.case import Case
from seatrial.dataset import _tau2_format as F
from seatrial.dataset._cases import ExpectedAction, Outcome, build_case, expected_assertions
from seatrial.dataset._common import Warnings, passed
from seatrial.i18n import N_
from seatrial.i18n import gettext as _
from seatrial.trace import Trace

NORMAL_ENDS = ("user_stop", "agent_stop")
"""Termination reasons of a conversation that ended by itself (tau2 scores only these)."""
_COMPONENT_TYPES = {
    "DB": "side_effect_missing",
    "ENV_ASSERTION": "side_effect_missing",
    "ACTION": "wrong_params",
    "COMMUNICATE": "semantic_mismatch",
    "NL_ASSERTION": "semantic_mismatch",
}
_ENDS = {
    "max_steps": ("its step limit was reached", "limit_exceeded"),
    "too_many_errors": ("too many tool calls failed", "agent_error"),
    "agent_error": ("the agent failed", "agent_error"),
    "user_error": ("the user simulator failed", "agent_error"),
}


_WITHOUT_TASK_ID = {
    "were matched to an embedded task by their expected-action ids": N_(
        "simulations without `task_id` were matched to an embedded task by their "
        "expected-action ids"
    ),
    "were matched to an embedded task by their NL assertions": N_(
        "simulations without `task_id` were matched to an embedded task by their NL assertions"
    ),
    "were matched to an embedded task by their expected actions": N_(
        "simulations without `task_id` were matched to an embedded task by their expected actions"
    ),
    "matched no embedded task: imported as `sim-<n>`": N_(
        "simulations without `task_id` matched no embedded task: imported as `sim-<n>`"
    ),
}
"""The warning for each way a simulation without ``task_id`` was matched (see ``_match``)."""


def match_tasks(
    sims: list[F.Simulation], tasks: dict[str, F.Task], warnings: Warnings
) -> dict[str, list[int]]:
    """Simulation positions per case id (``task-<id>``), in the embedded tasks' order.

    A simulation without ``task_id`` is matched to an embedded task by the ids of the
    expected actions its reward checked (``<task id>_<n>``), else by its NL assertions, else
    by its expected actions; one that matches none becomes ``sim-<n>``. Each way is warned.
    """
    groups: dict[str, list[int]] = {}
    for index, sim in enumerate(sims):
        if sim.task_id is not None:
            task_id = str(sim.task_id)
            if task_id not in tasks:
                warnings.add(
                    "unknown-task",
                    _(
                        "simulations name a task the file does not embed: their cases come "
                        "from the simulation alone"
                    ),
                    task_id,
                )
            groups.setdefault(f"task-{task_id}", []).append(index)
            continue
        found, how = _match(sim, tasks)
        key = f"task-{found}" if found is not None else f"sim-{index + 1}"
        warnings.add(
            f"task_id:{how}",
            _(_WITHOUT_TASK_ID[how]),
            f"sim {index + 1}" + (f" -> {found}" if found is not None else ""),
        )
        groups.setdefault(key, []).append(index)
    order = {f"task-{task_id}": n for n, task_id in enumerate(tasks)}
    return dict(sorted(groups.items(), key=lambda kv: order.get(kv[0], len(order))))


def _match(sim: F.Simulation, tasks: dict[str, F.Task]) -> tuple[str | None, str]:
    reward = sim.reward_info
    checks = (reward.action_checks if reward else None) or []
    prefixes = {c.action.action_id.rsplit("_", 1)[0] for c in checks if c.action.action_id}
    if len(prefixes) == 1:
        (task_id,) = prefixes
        expected = _criteria(tasks.get(task_id)).actions or []
        if {a.action_id for a in expected} >= {c.action.action_id for c in checks}:
            return task_id, "were matched to an embedded task by their expected-action ids"
    statements = [m.nl_assertion for m in (reward.nl_assertions if reward else None) or []]
    if statements:
        same = [i for i, t in tasks.items() if _criteria(t).nl_assertions == statements]
        if len(same) == 1:
            return same[0], "were matched to an embedded task by their NL assertions"
    if checks:
        wanted = [_action_key(c.action) for c in checks]
        same = [
            i
            for i, t in tasks.items()
            if [_action_key(a) for a in _criteria(t).actions or []] == wanted
        ]
        if len(same) == 1:
            return same[0], "were matched to an embedded task by their expected actions"
    return None, "matched no embedded task: imported as `sim-<n>`"


def _criteria(task: F.Task | None) -> F.Criteria:
    if task is None or task.evaluation_criteria is None:
        return F.Criteria()
    return task.evaluation_criteria


def _action_key(action: F.Action) -> str:
    return json.dumps([action.name, action.arguments], sort_keys=True)


def _instructions(task: F.Task | None) -> str:
    scenario = task.user_scenario if task is not None else None
    if scenario is None or scenario.instructions is None:
        return ""
    if isinstance(scenario.instructions, str):
        return scenario.instructions
    labels = {
        "reason_for_call": "Reason for call",
        "known_info": "Known info",
        "unknown_info": "Unknown info",
        "task_instructions": "Task instructions",
    }
    parts = [
        f"{label}: {str(scenario.instructions[key]).strip()}"
        for key, label in labels.items()
        if scenario.instructions.get(key)
    ]
    return "\n\n".join(parts)


def case_of(
    key: str,
    task: F.Task | None,
    sims: list[F.Simulation],
    domain: str,
    repeats: int,
    path: Path,
) -> Case:
    """The case of one task (``task`` None: built from its simulations alone)."""
    criteria = task.evaluation_criteria if task is not None else None
    actions = list(criteria.actions or []) if criteria is not None else []
    if task is None:  # no embedded task: the reward's action checks name the expected actions
        checks = next((s.reward_info.action_checks for s in sims if s.reward_info), None)
        actions = [check.action for check in checks or []]
    actions = [a for a in actions if a.requestor == "assistant"]
    first_user = next((m.content for s in sims for m in s.messages if m.role == "user"), None)
    metadata: dict[str, Any] = {"benchmark": "tau2", "task_id": key.removeprefix("task-")}
    if task is not None:
        scenario = task.user_scenario
        metadata |= {
            "instructions": scenario.instructions if scenario else None,
            "persona": scenario.persona if scenario else None,
            "nl_assertions": criteria.nl_assertions if criteria else None,
            "communicate_info": criteria.communicate_info if criteria else None,
            "reward_basis": criteria.reward_basis if criteria else None,
        }
    metadata["expected_actions"] = [a.model_dump(exclude_none=True) for a in actions]
    raw = {
        "id": key,
        "name": key.replace("-", " ", 1),
        "description": (task.description.purpose or "") if task and task.description else "",
        "category": domain,
        "input": _instructions(task) or first_user or "",
        "repeats": repeats,
        "source": "replay",
        "metadata": metadata,
        "assertions": expected_assertions([ExpectedAction(a.name, _compared(a)) for a in actions]),
    }
    return build_case(raw, f"{path}: {key}")


def _compared(action: F.Action) -> dict[str, Any]:
    if action.compare_args is None:
        return action.arguments
    return {k: v for k, v in action.arguments.items() if k in action.compare_args}


def outcome(sim: F.Simulation, trace: Trace) -> Outcome:
    """tau2's verdict: an abnormal end is ERROR, else the reward decides PASS or FAIL."""
    reward = sim.reward_info
    ending = sim.termination_reason
    if ending is not None and ending not in NORMAL_ENDS:
        why, failure_type = _ENDS.get(ending, ("it ended abnormally", "agent_error"))
        score = f"; tau2 scores it {reward.reward}" if reward else ""
        return Outcome("ERROR", f"not finished: {why} (`{ending}`){score}", failure_type)
    if reward is None:
        return Outcome("ERROR", "no reward: the simulation has no `reward_info`", "agent_error")
    said = f"reward {reward.reward} from tau2"
    if passed(reward.reward):
        return Outcome("PASS", said)
    called = {call.name for call in trace.tool_calls()}
    failures = _failures(reward, called)
    basis = set(reward.reward_basis or [f.component for f in failures])
    scored = [f for f in failures if f.component in basis]
    unscored = [f for f in failures if f.component not in basis]
    parts = [f.text for f in scored]
    if unscored:
        parts.append("not scored: " + "; ".join(f.text for f in unscored))
    reason = f"{said}: {'; '.join(parts)}" if parts else said
    return Outcome("FAIL", reason, scored[0].failure_type if scored else "business_rule")


class _Failure(NamedTuple):
    component: str
    text: str
    failure_type: str


def _failures(reward: F.RewardInfo, called: set[str]) -> list[_Failure]:
    """What failed, per reward component, in tau2's order."""
    found = []
    if reward.db_check is not None and not reward.db_check.db_match:
        found.append(
            _Failure("DB", "the database differs from the expected one", "side_effect_missing")
        )
    failed_env = [a for a in reward.env_assertions or [] if a.get("met") is False]
    if failed_env:
        found.append(
            _Failure(
                "ENV_ASSERTION",
                f"{len(failed_env)} environment assertion(s) failed",
                "side_effect_missing",
            )
        )
    missed = [c.action.name for c in reward.action_checks or [] if not c.action_match]
    if missed:
        kind = "wrong_params" if missed[0] in called else "tool_not_called"
        shown = ", ".join(missed[:3]) + (", ..." if len(missed) > 3 else "")
        found.append(_Failure("ACTION", f"expected actions not matched: {shown}", kind))
    unsaid = [m.info or "" for m in reward.communicate_checks or [] if not m.met]
    if unsaid:
        text = f"not communicated: {', '.join(unsaid)}"
        found.append(_Failure("COMMUNICATE", text, "semantic_mismatch"))
    unmet = [m.nl_assertion or "" for m in reward.nl_assertions or [] if not m.met]
    if unmet:
        first = unmet[0] if len(unmet[0]) <= 80 else unmet[0][:77] + "..."
        text = f"{len(unmet)} NL assertion(s) not met, e.g. {first!r}"
        found.append(_Failure("NL_ASSERTION", text, "semantic_mismatch"))
    explained = {f.component for f in found}
    for component, score in (reward.reward_breakdown or {}).items():
        if score < 1 and component not in explained:
            kind = _COMPONENT_TYPES.get(component, "business_rule")
            found.append(_Failure(component, f"{component} scored {score}", kind))
    return found
