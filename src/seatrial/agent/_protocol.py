"""The contract between the runner and an agent adapter."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from seatrial.case import Case
from seatrial.trace import Trace, TraceRecorder

if TYPE_CHECKING:
    from seatrial.agent._sandbox import Sandbox


@dataclass
class AttemptContext:
    """Everything an adapter needs to drive one attempt of one case.

    The runner opens the attempt's root ``invoke_agent`` span before calling the adapter and
    closes it after; spans the adapter records land under it.
    """

    run_id: str
    case: Case
    attempt: int
    session_id: str
    user_id: str
    recorder: TraceRecorder
    workspace: Path | None = None
    sandbox: Sandbox | None = None
    gateway_url: str | None = None
    """The attempt's OpenAI base URL on the gateway proxy (``seatrial run --gateway``)."""


@dataclass
class AgentOutput:
    """What the agent said and, where it reports one, its final external state."""

    responses: list[str] = field(default_factory=list)
    final_state: dict[str, Any] | None = None
    trace: Trace | None = None
    """A complete trace brought by the adapter (replay); None means the recorder's."""

    @property
    def response(self) -> str:
        """The reply to the last turn."""
        return self.responses[-1] if self.responses else ""


@runtime_checkable
class AgentAdapter(Protocol):
    """Drives the agent under test through one attempt.

    Failures of the agent (it raised, answered HTTP 5xx or malformed JSON, was unreachable)
    are raised as :class:`seatrial.errors.AgentError`; the runner records them as ERROR.
    """

    spec: str
    """The spec it was built from, e.g. ``http://127.0.0.1:9000/chat``."""
    name: str
    """Short name for the ``invoke_agent {name}`` span."""

    async def check(self) -> None:
        """Preflight, called once before a run: can the agent be reached or loaded?

        Raises :class:`seatrial.errors.AgentSpecError` saying what is wrong and what to do.
        Nothing is sent to the agent (an HTTP check only opens a TCP connection).
        """
        ...

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """Send every user turn of ``ctx.case`` and return the replies."""
        ...

    async def aclose(self) -> None:
        """Release connections and other resources."""
        ...
