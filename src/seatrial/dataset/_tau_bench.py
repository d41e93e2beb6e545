"""Importing a tau-bench results file: the JSON list ``run.py`` writes, one record per trial.

Each record is ``{task_id, trial, reward, info{task, reward_info}, traj}`` where ``traj`` is
the OpenAI chat history. See docs/import.md for what maps to what.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seatrial.case import Case
from seatrial.dataset import _tau_bench_format as F
from seatrial.dataset._cases import (
    ExpectedAction,
    Outcome,
    build_case,
    expected_assertions,
    make_attempt,
)
from seatrial.dataset._common import (
    ImportResult,
    Warnings,
    new_run_id,
    parse,
    passed,
    read_json,
    run_info,
    store_run,
)
from seatrial.dataset._conversation import IMPORT_REWARD, IMPORT_REWARD_INFO
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

FORMAT = "tau-bench"
DOMAINS = ("airline", "retail")
_CHECKPOINT = re.compile(
    r"^(?:tool-calling|act|react|few-shot|orchestrated-tool-calling)-(?P<model>.+)"
    r"-\d+(?:\.\d+)?_range_"
)


def import_tau_bench(path: Path | str, store: Store, *, tags: Sequence[str] = ()) -> ImportResult:
    """Store a tau-bench results file as one finished run; see docs/import.md.

    Raises :class:`InputError` (nothing stored) when the file is not a tau-bench results file.
    """
    path = Path(path)
    data = read_json(path, F.EXPECTED)
    if isinstance(data, dict) and "simulations" in data:
        raise InputError(
            _("{path}: this is a tau2 results file; use `seatrial import tau2`").format(path=path)
        )
    records: list[F.Record] = parse(F.ResultsFile, data, path, N_("the file"), F.EXPECTED).root
    if not records:
        raise InputError(
            _("{path}: the list is empty; expected {expected}").format(
                path=path, expected=_(F.EXPECTED)
            )
        )
    warnings = Warnings()
    domain = _domain(path, records, warnings)
    agent = _agent(path, domain, warnings)
    run_id = new_run_id()
    started = time.time()
    groups = _group(records, warnings)
    cases: list[Case] = []
    attempts: list[AttemptRecord] = []
    cursor = time.time_ns()
    for key, members in groups.items():
        numbered = number_trials(key, [(i, records[i].trial) for i in members], warnings)
        case = _case(key, [records[i] for i in members], domain, len(numbered), path)
        cases.append(case)
        for index, attempt in numbered:
            record = records[index]
            conversation = build_conversation(
                _messages(record, warnings),
                agent=agent,
                model=agent,
                start_ns=cursor,
                root_attributes={
                    IMPORT_REWARD: record.reward,
                    IMPORT_REWARD_INFO: json.dumps(record.info.reward_info, sort_keys=True),
                },
            )
            cursor = conversation.finished_ns + CONVERSATION_STEP_NS
            attempts.append(make_attempt(run_id, case, attempt, conversation, _outcome(record)))
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
        extra={"agent_from": "file name", "times": "synthesised"},
    )
    store_run(store, info, cases, attempts)
    return ImportResult(run_id, len(cases), len(attempts), lines)


def _domain(path: Path, records: list[F.Record], warnings: Warnings) -> str:
    """airline or retail: from the file name, else the policy's title, else ``unknown``."""
    tokens = re.split(r"[-_.\s]+", path.stem.lower())
    for domain in DOMAINS:
        if domain in tokens:
            return domain
    for record in records:
        system = next((m.content for m in record.traj if m.role == "system"), None)
        title = (system or "").lstrip("# ").split("\n", 1)[0].lower()
        for domain in DOMAINS:
            if title.startswith(domain):
                return domain
    warnings.add("domain", _("the domain is neither in the file name nor in the policy: `unknown`"))
    return "unknown"


def _agent(path: Path, domain: str, warnings: Warnings) -> str:
    """The model, read off the file name (tau-bench records do not name it)."""
    found = _CHECKPOINT.match(path.stem)
    if found:
        return found["model"]
    tokens = [t for t in re.split(r"[-_]+", path.stem) if t and t.lower() != domain]
    if tokens:
        return "-".join(tokens)
    warnings.add("agent", _("the file name does not name the model: agent `unknown`"))
    return "unknown"


def _group(records: list[F.Record], warnings: Warnings) -> dict[str, list[int]]:
    """Record indexes per case id, in the order tasks first appear."""
    groups: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        if record.task_id is not None:
            key = f"task-{record.task_id}"
        elif record.info.task is not None:
            task = json.dumps(record.info.task.model_dump(), sort_keys=True)
            key = f"task-def-{hashlib.sha256(task.encode()).hexdigest()[:8]}"
            warnings.add(
                "task_id",
                _(
                    "records without `task_id` were grouped by their embedded task "
                    "definition (case `task-def-<hash>`)"
                ),
                f"record {index + 1}",
            )
        else:
            key = f"record-{index + 1}"
            warnings.add(
                "task_id",
                _("records without `task_id` or task were imported one case each (`record-<n>`)"),
                f"record {index + 1}",
            )
        groups.setdefault(key, []).append(index)
    if all(isinstance(r.task_id, int) for r in records):
        return dict(sorted(groups.items(), key=lambda kv: int(kv[0].removeprefix("task-"))))
    return groups


def _case(key: str, members: list[F.Record], domain: str, repeats: int, path: Path) -> Case:
    task = next((r.info.task for r in members if r.info.task is not None), None)
    first_user = next((m.content for r in members for m in r.traj if m.role == "user"), None)
    actions = task.actions if task is not None else []
    metadata: dict[str, Any] = {"benchmark": FORMAT, "task_id": members[0].task_id}
    if task is not None:
        metadata |= {
            "instruction": task.instruction,
            "user_id": task.user_id,
            "outputs": task.outputs,
            "expected_actions": [a.model_dump() for a in task.actions],
        }
    raw = {
        "id": key,
        "name": key.replace("-", " ", 1),
        "category": domain,
        "input": (task.instruction if task is not None else "") or first_user or "",
        "repeats": repeats,
        "source": "replay",
        "metadata": metadata,
        "assertions": expected_assertions([ExpectedAction(a.name, a.kwargs) for a in actions]),
    }
    return build_case(raw, f"{path}: {key}")


def _messages(record: F.Record, warnings: Warnings) -> list[ConversationMessage]:
    messages = []
    for position, message in enumerate(record.traj):
        if message.role == "user":
            messages.append(ConversationMessage("user", message.content))
        elif message.role == "assistant":
            calls = tuple(
                ConversationCall(
                    call_id=call.id or f"call_{position}_{n}",
                    name=call.function.name,
                    arguments=_arguments(call.function.arguments),
                )
                for n, call in enumerate(message.tool_calls or ())
            )
            messages.append(ConversationMessage("assistant", message.content, calls))
        elif message.role == "tool":
            text = message.content or ""
            error = text.startswith("Error")
            messages.append(
                ConversationMessage("tool", text, answers=message.tool_call_id, error=error)
            )
        elif message.role != "system":
            warnings.add("role", _("messages with an unknown role were skipped"), message.role)
    return messages


def _arguments(value: str | dict[str, Any]) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _outcome(record: F.Record) -> Outcome:
    """tau-bench's verdict: an exception, an unfinished conversation, else the reward."""
    if record.info.error is not None:
        return Outcome(
            "ERROR", f"tau-bench could not run the trial: {record.info.error}", "agent_error"
        )
    reward_info = record.info.reward_info
    if reward_info is None:
        steps = sum(m.role == "assistant" for m in record.traj)
        return Outcome(
            "ERROR",
            f"not finished: the conversation stopped after {steps} agent steps (tau-bench's "
            f"step limit) without an end, so no reward was computed (tau-bench scores it "
            f"{record.reward})",
            "limit_exceeded",
        )
    said = f"reward {record.reward} from tau-bench"
    if passed(record.reward):
        return Outcome("PASS", said)
    why, failure_type = _why(reward_info.get("info") or {})
    return Outcome("FAIL", f"{said}: {why}" if why else said, failure_type)


def _why(info: dict[str, Any]) -> tuple[str, str]:
    """What tau-bench's reward breakdown says went wrong, and its failure type."""
    outputs, r_outputs = info.get("outputs"), info.get("r_outputs")
    if isinstance(outputs, dict) and isinstance(r_outputs, int | float) and r_outputs < 1:
        missing = ", ".join(str(k) for k, said in outputs.items() if not said)
        return f"the agent never said the expected output(s) {missing}", "semantic_mismatch"
    if "r_actions" in info and not info["r_actions"]:
        return (
            "the database after the conversation differs from the expected one",
            "side_effect_missing",
        )
    if isinstance(outputs, dict):
        return (
            "the expected outputs were said, so the database after the conversation differs "
            "from the expected one",
            "side_effect_missing",
        )
    return "", "business_rule"
