"""From a production trace to a case: the user's turns, the tools' recorded answers, and
assertions proposed from what happened, each marked for a person to keep or drop.

The trace is stored masked, so the case is too: a ``<PHONE_1>`` in the user's message stays
``<PHONE_1>`` in the case and in every proposed argument. Proposals read only what the trace
shows:

- the tools called successfully (``tool_called``, kept) and their order (``tool_sequence``,
  not kept: the order of look-ups differs between good runs);
- their key arguments, ids and codes rather than free text (``tool_params``): kept when the
  value came from the user's own words, not kept when a tool supplied it (a live backend may
  hand out another id);
- forbidden behaviour that was observed: a failing call repeated with the same arguments
  (``no_loop``), a refused permission (``permissions_respected``, ``tool_not_called``), a
  tool whose last call failed (``tool_success``, not kept), an agent span that failed
  (``trace_complete``, not kept);
- limits from the observed counts: tool and model calls with :func:`limit_with_margin`
  (kept), tokens at twice the observed figure (not kept: they vary by model and wording).

Every assertion is checked with :func:`seatrial.case.check_assertion` before it is proposed,
so a written case always loads.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from seatrial.case import Case, check_assertion
from seatrial.dataset._from_trace_turns import recorded_tool_results, texts_of, user_turns
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.trace import Trace, TraceToolCall, encode_json
from seatrial.trace import attrs as A

PERMISSION_DENIED = "permission_denied"
"""``error.type`` of a call the sandbox (or the agent's own policy) refused."""
MAX_TOOL_PARAMS = 10
"""At most this many tools get a ``tool_params`` proposal (the first called)."""
MAX_ID_LENGTH = 64
"""A longer argument value is text, not an id."""
SERVICE_NAME = "service.name"
_ID_KEY = re.compile(r"(?:^|[_.-])(?:id|ids|no|number|code|sku|ref)$", re.IGNORECASE)
_CAMEL_ID_KEY = re.compile(r"[a-z](?:Id|ID|Ids|No|Number|Code|Ref)$")
_MASK_TOKEN = re.compile(r"^<[A-Z][A-Z0-9_]*_\d+>$")
_DENIED_DECISIONS = frozenset({"denied", "deny", "refused", "rejected"})


@dataclass(frozen=True)
class Proposal:
    """One assertion proposed from what a trace shows, for a person to keep or drop."""

    assertion: dict[str, Any]
    """The assertion as a case writes it (``type``, ``id`` and its parameters)."""
    why: str
    """What in the trace it comes from, in one line."""
    keep: bool
    """Whether it is on in the written case (a person may still delete it)."""

    @property
    def id(self) -> str:
        """The assertion's id."""
        return str(self.assertion["id"])

    def as_dict(self) -> dict[str, Any]:
        """The proposal as stored with a pending case and in ``metadata.proposed``."""
        return {"assertion": dict(self.assertion), "why": self.why, "keep": self.keep}


@dataclass(frozen=True)
class ProposedCase:
    """A case made from a trace: the kept proposals are its assertions."""

    case: Case
    proposals: list[Proposal] = field(default_factory=list)


def limit_with_margin(observed: int) -> int:
    """The proposed upper bound for a count seen once: the count plus half again, at least
    two more (a good agent may look one thing up again; a loop goes far past it)."""
    return observed + max(2, math.ceil(observed / 2))


def _is_key_argument(name: str, value: Any) -> bool:
    """An id, code or masked token: a value worth asserting, unlike free text."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return False
    text = str(value)
    if not text or len(text) > MAX_ID_LENGTH or any(ch.isspace() for ch in text):
        return False
    if _MASK_TOKEN.match(text):
        return True
    if _ID_KEY.search(name) or _CAMEL_ID_KEY.search(name):
        return True
    return len(text) >= 6 and any(ch.isdigit() for ch in text)


def _denied(call: TraceToolCall) -> bool:
    if call.error_type == PERMISSION_DENIED:
        return True
    return any(
        str(event.value(A.PERMISSION_DECISION, "")).strip().casefold() in _DENIED_DECISIONS
        for event in call.span.events
        if event.name == A.PERMISSION
    )


def _distinct(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _tools(calls: list[TraceToolCall], said: str) -> list[Proposal]:
    """``tool_called``, ``tool_sequence`` and ``tool_params`` from the successful calls."""
    succeeded = [c for c in calls if c.success]
    names = _distinct([c.name for c in succeeded])
    if not names:
        return []
    listed = ", ".join(names)
    found = [
        Proposal(
            {"type": "tool_called", "id": "called-tools", "expected": names},
            f"the trace called {listed} successfully",
            keep=True,
        )
    ]
    if len(names) > 1:
        found.append(
            Proposal(
                {
                    "type": "tool_sequence",
                    "id": "tool-order",
                    "expected": names,
                    "mode": "in_order",
                    "must_pass": False,
                },
                f"the trace first called them in this order: {' -> '.join(names)}; good runs "
                "may look things up in another order",
                keep=False,
            )
        )
    for name in names[:MAX_TOOL_PARAMS]:
        first = next(c for c in succeeded if c.name == name)
        if isinstance(first.arguments, Mapping):
            found += _params(name, first.arguments, said)
    return found


def _params(tool: str, arguments: Mapping[str, Any], said: str) -> list[Proposal]:
    """``tool_params`` over the key arguments: those the user said, and those a tool gave."""
    keys = {k: v for k, v in arguments.items() if _is_key_argument(str(k), v)}
    from_user = {k: v for k, v in keys.items() if str(v) in said}
    from_tools = {k: v for k, v in keys.items() if k not in from_user}
    found = []
    if from_user:
        found.append(
            Proposal(
                {
                    "type": "tool_params",
                    "id": f"params:{tool}",
                    "tool": tool,
                    "expected": from_user,
                },
                f"{tool} was called with {_listing(from_user)}, taken from the user's words",
                keep=True,
            )
        )
    if from_tools:
        found.append(
            Proposal(
                {
                    "type": "tool_params",
                    "id": f"params:{tool}:recorded",
                    "tool": tool,
                    "expected": from_tools,
                },
                f"{tool} was called with {_listing(from_tools)}, which the user never said (a "
                "tool supplied it); a live backend may give another",
                keep=False,
            )
        )
    return found


def _listing(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in values.items())


def _repeated_failures(calls: list[TraceToolCall]) -> Counter[tuple[str, str]]:
    """How often each identical failing call (tool and arguments) happened."""
    return Counter(
        (c.name, encode_json(c.arguments)) for c in calls if not c.success and not _denied(c)
    )


def _forbidden(trace: Trace, calls: list[TraceToolCall]) -> list[Proposal]:
    """Proposals against the bad behaviour the trace shows: a loop, a refusal, an error."""
    found = []
    repeats = {key: n for key, n in _repeated_failures(calls).items() if n > 1}
    if repeats:
        worst = max(repeats, key=lambda key: repeats[key])
        found.append(
            Proposal(
                {"type": "no_loop", "id": "no-loop", "max_repeats": 1},
                f"{worst[0]} failed {repeats[worst]} times with the same arguments",
                keep=True,
            )
        )
    denied = _distinct([c.name for c in calls if _denied(c)])
    if denied:
        found.append(
            Proposal(
                {"type": "permissions_respected", "id": "permissions"},
                f"the trace records a refused permission for {', '.join(denied)}",
                keep=True,
            )
        )
        granted = {c.name for c in calls if c.success}
        never = [name for name in denied if name not in granted]
        if never:
            found.append(
                Proposal(
                    {"type": "tool_not_called", "id": "not-called:denied", "expected": never},
                    f"{', '.join(never)} was tried and refused, never allowed",
                    keep=True,
                )
            )
    last = {c.name: c for c in calls}
    broken = [name for name, c in last.items() if not c.success and not _denied(c)]
    if broken:
        found.append(
            Proposal(
                {"type": "tool_success", "id": "tools-succeed", "expected": broken, "mode": "last"},
                f"the last call of {', '.join(broken)} failed in the trace; keep this only if a "
                "good agent can make it succeed",
                keep=False,
            )
        )
    agent = trace.agent_span()
    if agent is not None and agent.status == "error":
        found.append(
            Proposal(
                {"type": "trace_complete", "id": "trace-complete"},
                f"the agent's span ended in error ({agent.attributes.get(A.ERROR_TYPE, 'error')})",
                keep=False,
            )
        )
    return found


def _limits(trace: Trace, calls: list[TraceToolCall]) -> list[Proposal]:
    """Limits from the observed counts; a loop's extra repeats are not counted."""
    found = []
    extra = sum(n - 1 for n in _repeated_failures(calls).values())
    tool_calls = len(calls) - extra
    model_calls = len(trace.model_calls())
    bounds: dict[str, int] = {}
    seen = []
    if tool_calls:
        bounds["tool_calls"] = limit_with_margin(tool_calls)
        looped = f" ({extra} repeats of a failing call not counted)" if extra else ""
        seen.append(f"{tool_calls} tool calls{looped}")
    if model_calls:
        bounds["model_calls"] = limit_with_margin(model_calls)
        seen.append(f"{model_calls} model calls")
    if bounds:
        found.append(
            Proposal(
                {"type": "limits", "id": "observed-limits", **bounds},
                f"the trace made {' and '.join(seen)}; each limit is that plus half, at least 2",
                keep=True,
            )
        )
    tokens = sum(trace.token_usage())
    if tokens:
        found.append(
            Proposal(
                {"type": "limits", "id": "observed-tokens", "tokens": tokens * 2},
                f"the trace used {tokens} tokens; tokens vary with the model and the wording",
                keep=False,
            )
        )
    return found


def _checked(proposals: list[Proposal], where: str) -> list[Proposal]:
    """The proposals, each validated against the registry as a suite loader would."""
    for proposal in proposals:
        spec = proposal.assertion
        params = {
            k: v for k, v in spec.items() if k not in ("type", "id", "level", "must_pass", "weight")
        }
        problems = check_assertion(str(spec["type"]), params).problems
        if problems:
            raise InputError(f"{where}: the proposed `{proposal.id}` is invalid: {problems[0][1]}")
    return proposals


def default_case_id(trace_id: str) -> str:
    """``trace-`` and the first 16 hex digits of the trace id."""
    return f"trace-{trace_id[:16]}"


def case_from_trace(trace: Trace, *, case_id: str | None = None) -> ProposedCase:
    """A case replaying the user's side of ``trace``, with proposed assertions.

    Raises :class:`InputError` when the trace records no user message (nothing to send).
    """
    turns = user_turns(trace)
    if not turns:
        raise InputError(
            _(
                "trace {trace_id} records no user message (looked for {turn} events, "
                "{messages}, {legacy}N, llm.input_messages.N and input.value); a case needs "
                "what the user said"
            ).format(
                trace_id=trace.trace_id,
                turn=A.TURN,
                messages=A.INPUT_MESSAGES,
                legacy=A.LEGACY_PROMPT_PREFIX,
            )
        )
    calls = trace.tool_calls()
    said = texts_of(turns)
    proposals = _checked(
        [*_tools(calls, said), *_forbidden(trace, calls), *_limits(trace, calls)],
        f"trace {trace.trace_id}",
    )
    service = trace.resource.get(SERVICE_NAME)
    metadata: dict[str, Any] = {
        "trace_id": trace.trace_id,
        "proposed": [
            {"id": p.id, "type": p.assertion["type"], "keep": p.keep, "why": p.why}
            for p in proposals
        ],
        "recorded_tool_results": recorded_tool_results(trace),
    }
    if service:
        metadata["service"] = str(service)
    raw: dict[str, Any] = {
        "id": case_id or default_case_id(trace.trace_id),
        "name": f"from production trace {trace.trace_id}",
        "description": "Made by `seatrial cases from-trace` from a masked production trace; "
        "review the proposed assertions.",
        "tags": ["from-trace"],
        "source": "replay",
        "metadata": metadata,
        "assertions": [p.assertion for p in proposals if p.keep],
    }
    if len(turns) == 1:
        raw["input"] = turns[0]
    else:
        raw["turns"] = turns
    return ProposedCase(case=Case.model_validate(raw), proposals=proposals)
