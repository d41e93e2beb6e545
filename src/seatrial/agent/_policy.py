"""The permission policy: which tool calls an attempt may make, decided per call.

Read-class tools only need to be in ``allowed_tools`` (when the case sets it). Write-class
tools (``write_file``, ``run_command``, ``http_request``, and ``@seatrial.tool`` functions not
declared ``read_only``) also consult the environment and ``case.permissions``. Every
write-class call and every refusal leaves a ``seatrial.permission`` event in the trace, so a
verdict can show what the agent tried, not only what it did.
"""

from __future__ import annotations

import contextvars
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass

from seatrial.agent._errors import ToolDenied
from seatrial.case import Case
from seatrial.i18n import N_
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

WRITE_TOOLS = frozenset({"write_file", "run_command", "http_request"})
"""The sandbox tools that change state outside the agent."""

_current_policy: contextvars.ContextVar[PermissionPolicy | None] = contextvars.ContextVar(
    "seatrial_policy", default=None
)
"""The attempt's permission policy, for ``@seatrial.tool`` functions the agent calls directly.
Set only by :meth:`PermissionPolicy.activate`: the Python adapter activates the session's
policy around each turn of the agent function, ``Session.call_tool`` around the tool it calls;
the value is reset when that block ends. Defined in ``agent``, below ``run``, because the
tools that read it are agent code."""


@dataclass(frozen=True)
class Decision:
    """The policy's answer for one call."""

    granted: bool
    scope: str
    """What decided: once, session, deny, default (no entry), read, allowed_tools, production."""
    reason: str


# The answers that depend on nothing but the rule that gave them, made once (frozen, shared):
# every tool call of every attempt is decided. Their reasons are recorded in English and marked
# for the catalogs: a check quoting one reads it in the reader's language.
_READ = Decision(True, "read", N_("read-only tool"))
_PRODUCTION = Decision(False, "production", N_("production: read-only tools only"))
_DEFAULT = Decision(True, "default", N_("no permission entry for this tool"))
_SESSION = Decision(True, "session", N_("granted for the whole session"))


class PermissionPolicy:
    """The grants of one attempt; ``once`` grants are used up as calls are granted."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self._used_once: set[str] = set()
        self._lock = threading.Lock()

    @staticmethod
    def current() -> PermissionPolicy | None:
        """The policy of the attempt running in this context, if an adapter activated one."""
        return _current_policy.get()

    def activate(self) -> AbstractContextManager[PermissionPolicy]:
        """Make this the policy ``@seatrial.tool`` functions consult in this context."""
        return _Activation(self)

    def decide(self, tool: str, *, write: bool) -> Decision:
        """Decide one call; a granted ``once`` call uses the grant up."""
        allowed = self.case.allowed_tools
        if allowed is not None and tool not in allowed:
            listed = ", ".join(allowed) or "none"
            return Decision(False, "allowed_tools", f"not in the case's allowed_tools ({listed})")
        if not write:
            return _READ
        if self.case.env == "production":
            return _PRODUCTION
        entry = self.case.permissions.get(tool)
        if entry is None:
            return _DEFAULT
        if entry == "session":
            return _SESSION
        if entry == "deny":
            return Decision(False, "deny", f"permissions.{tool} is deny")
        with self._lock:
            if tool in self._used_once:
                return Decision(False, "once", N_("a once grant allows one call and it was used"))
            self._used_once.add(tool)
        return Decision(True, "once", N_("granted once"))

    def authorize(self, recorder: TraceRecorder, tool: str, *, write: bool) -> Decision:
        """Decide, record the ``seatrial.permission`` event, and raise :class:`ToolDenied`."""
        decision = self.decide(tool, write=write)
        if write or not decision.granted:
            recorder.event(
                A.PERMISSION,
                {
                    A.PERMISSION_TOOL: tool,
                    A.PERMISSION_SCOPE: decision.scope,
                    A.PERMISSION_DECISION: "granted" if decision.granted else "denied",
                    A.PERMISSION_REASON: decision.reason,
                },
            )
        if not decision.granted:
            raise ToolDenied(tool, decision.scope, decision.reason)
        return decision


class _Activation:
    """The block of :meth:`PermissionPolicy.activate`: a class, not a generator, because it is
    entered for every turn and tool call of every attempt."""

    __slots__ = ("_policy", "_token")

    def __init__(self, policy: PermissionPolicy) -> None:
        self._policy = policy

    def __enter__(self) -> PermissionPolicy:
        self._token = _current_policy.set(self._policy)
        return self._policy

    def __exit__(self, *exc: object) -> None:
        _current_policy.reset(self._token)
