"""Importing a tau2-bench results file: ``{info, tasks, simulations}``, one simulation per trial.

See docs/import.md for what maps to what.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seatrial.case import Case
from seatrial.dataset import _tau2_format as F
from seatrial.dataset._cases import make_attempt
from seatrial.dataset._common import (
    ImportResult,
    Warnings,
    new_run_id,
    parse,
    read_json,
    run_info,
    store_run,
)
from seatrial.dataset._conversation import IMPORT_REWARD, IMPORT_REWARD_INFO, IMPORT_TERMINATION
from seatrial.dataset._tau2_tasks import case_of, match_tasks, outcome
from seatrial.dataset._trials import number_trials
from seatrial.errors import InputError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord
from seatrial.store import Store
from seatrial.trace import (
    CONVERSATION_STEP_NS,
    ConversationCall,
    ConversationMessage,
    build_conversation,
)
from seatrial.trace import attrs as A

FORMAT = "tau2"
DOMAINS = ("airline", "retail", "telecom", "mock")


def import_tau2(path: Path | str, store: Store, *, tags: Sequence[str] = ()) -> ImportResult:
    """Store a tau2-bench results file as one finished run; see docs/import.md.

    Raises :class:`InputError` (nothing stored) when the file is not a tau2 results file.
    """
    path = Path(path)
    data = read_json(path, F.EXPECTED)
    if isinstance(data, list):
        raise InputError(
            _(
                "{path}: a JSON list is a tau-bench results file, not a tau2 one; "
                "use `seatrial import tau-bench`"
            ).format(path=path)
        )
    results: F.ResultsFile = parse(F.ResultsFile, data, path, N_("the file"), F.EXPECTED)
    if not results.simulations:
        raise InputError(
            _("{path}: `simulations` is empty; expected {expected}").format(
                path=path, expected=_(F.EXPECTED)
            )
        )
    warnings = Warnings()
    domain = _domain(path, results, warnings)
    agent = _agent(path, results, warnings)
    tasks = {str(task.id): task for task in results.tasks}
    groups = match_tasks(results.simulations, tasks, warnings)
    run_id = new_run_id()
    started = time.time()
    cases: list[Case] = []
    attempts: list[AttemptRecord] = []
    cursor = time.time_ns()
    for key, members in groups.items():
        trials = [(i, results.simulations[i].trial) for i in members]
        numbered = number_trials(key, trials, warnings)
        sims = [results.simulations[i] for i in members]
        case = case_of(key, tasks.get(key.removeprefix("task-")), sims, domain, len(numbered), path)
        cases.append(case)
        for index, attempt in numbered:
            sim = results.simulations[index]
            conversation = build_conversation(
                _messages(sim, warnings),
                agent=agent,
                model=agent,
                start_ns=_time_ns(sim.start_time) or cursor,
                end_ns=_time_ns(sim.end_time),
                root_attributes=_root_attributes(sim),
            )
            cursor = conversation.finished_ns + CONVERSATION_STEP_NS
            record = make_attempt(
                run_id, case, attempt, conversation, outcome(sim, conversation.trace), sim.id or ""
            )
            attempts.append(record)
    if any(sim.termination_reason is None for sim in results.simulations):
        warnings.add(
            "termination",
            _("termination reasons are missing: verdicts come from the reward alone"),
        )
    _check_trials(results, cases, warnings)
    lines = warnings.lines()
    info = run_info(
        run_id=run_id,
        path=path,
        fmt=FORMAT,
        domain=domain,
        agent=agent,
        tags=tags,
        cases=cases,
        warnings=lines,
        started_at=started,
        extra={"times": _times(results), "tau2": _settings(results)},
    )
    store_run(store, info, cases, attempts)
    return ImportResult(run_id, len(cases), len(attempts), lines)


def _domain(path: Path, results: F.ResultsFile, warnings: Warnings) -> str:
    environment = results.info.get("environment_info")
    if isinstance(environment, dict) and isinstance(environment.get("domain_name"), str):
        return str(environment["domain_name"])
    for task in results.tasks:
        scenario = task.user_scenario
        if scenario is not None and isinstance(scenario.instructions, dict):
            if isinstance(scenario.instructions.get("domain"), str):
                return str(scenario.instructions["domain"])
    tokens = re.split(r"[-_.\s]+", path.stem.lower())
    found = next((d for d in DOMAINS if d in tokens), None)
    if found is not None:
        return found
    warnings.add("domain", _("the file names no domain: `unknown`"))
    return "unknown"


def _agent(path: Path, results: F.ResultsFile, warnings: Warnings) -> str:
    agent_info = results.info.get("agent_info")
    if isinstance(agent_info, dict) and isinstance(agent_info.get("llm"), str):
        return str(agent_info["llm"])
    warnings.add("agent", _("`info.agent_info.llm` is missing: the agent is named after the file"))
    return path.stem


def _settings(results: F.ResultsFile) -> dict[str, Any]:
    info = results.info
    user = info.get("user_info") if isinstance(info.get("user_info"), dict) else {}
    agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    return {
        "timestamp": results.timestamp,
        "git_commit": info.get("git_commit"),
        "num_trials": info.get("num_trials"),
        "max_steps": info.get("max_steps"),
        "max_errors": info.get("max_errors"),
        "seed": info.get("seed"),
        "agent_implementation": (agent or {}).get("implementation"),
        "user_llm": (user or {}).get("llm"),
    }


def _times(results: F.ResultsFile) -> str:
    """``recorded`` when every message has its timestamp, else ``synthesised``."""
    every = all(m.timestamp for sim in results.simulations for m in sim.messages)
    return "recorded" if every else "synthesised"


def _check_trials(results: F.ResultsFile, cases: list[Case], warnings: Warnings) -> None:
    said = results.info.get("num_trials")
    held = {case.repeats for case in cases}
    if isinstance(said, int) and held != {said}:
        counts = "/".join(str(n) for n in sorted(held))
        warnings.add(
            "num_trials",
            _("`info.num_trials` says {said} but the file holds {counts} trial(s) per task").format(
                said=said, counts=counts
            ),
        )
    elif len(held) > 1:
        warnings.add("uneven", _("tasks have different numbers of trials"))


def _time_ns(text: str | None) -> int | None:
    """An ISO 8601 time as nanoseconds; tau2 writes local time without a zone: read as UTC."""
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1_000_000) * 1000


def _messages(sim: F.Simulation, warnings: Warnings) -> list[ConversationMessage]:
    if any(m.timestamp is None for m in sim.messages):
        warnings.add(
            "timestamps",
            _("messages without timestamps: times synthesised 1 ms apart in file order"),
        )
    messages: list[ConversationMessage] = []
    for n, message in enumerate(sim.messages):
        at = _time_ns(message.timestamp)
        if message.role == "assistant":
            calls = tuple(
                ConversationCall(call.id or f"call_{n}_{k}", call.name, _arguments(call.arguments))
                for k, call in enumerate(message.tool_calls or ())
                if call.requestor == "assistant"
            )
            usage = _usage(message.usage)
            messages.append(
                ConversationMessage(
                    "assistant", message.content, calls, None, False, at, usage, message.cost
                )
            )
        elif message.role == "user":
            messages.append(ConversationMessage("user", message.content, time_ns=at))
        elif message.role == "tool" and message.requestor in (None, "assistant"):
            text = message.content or ""
            error = message.error if message.error is not None else text.startswith("Error")
            messages.append(
                ConversationMessage("tool", text, answers=message.id, error=error, time_ns=at)
            )
    return messages


def _arguments(value: dict[str, Any] | str) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _usage(usage: dict[str, Any] | None) -> tuple[int, int] | None:
    if not usage:
        return None
    prompt = usage.get("prompt_tokens", usage.get("input_tokens", 0))
    completion = usage.get("completion_tokens", usage.get("output_tokens", 0))
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return prompt, completion


def _root_attributes(sim: F.Simulation) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if sim.id:
        attributes[A.CONVERSATION_ID] = sim.id
    if sim.reward_info is not None:
        attributes[IMPORT_REWARD] = sim.reward_info.reward
        attributes[IMPORT_REWARD_INFO] = json.dumps(
            sim.reward_info.model_dump(mode="json"), sort_keys=True
        )
    if sim.termination_reason is not None:
        attributes[IMPORT_TERMINATION] = sim.termination_reason
    return attributes
