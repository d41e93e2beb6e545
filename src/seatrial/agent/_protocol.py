"""The contract between the runner and an agent adapter."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from seatrial.case import Case
from seatrial.trace import Trace, TraceRecorder

if TYPE_CHECKING:
    from seatrial.agent._sandbox import Sandbox


METADATA_KEYS = ("agent_version", "prompt_hash", "tool_schema_hash", "model")
"""The keys of an agent's metadata that Seatrial reads (others are kept as given)."""

_METADATA_MAX_KEYS = 20
_METADATA_MAX_TEXT = 200


def content_hash(value: Any) -> str:
    """sha256 (first 16 hex digits) of a text, or of anything else as canonical JSON.

    Canonical JSON: keys sorted, no spaces, UTF-8 (``json.dumps(value, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)``), so an HTTP agent can compute the same.
    """
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]


def clean_metadata(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An agent's metadata as stored: scalar values only, texts cut at 200 characters.

    Lists, objects and nulls are left out, as are keys past the twentieth: the metadata is
    stored with every attempt and must stay small.
    """
    clean: dict[str, Any] = {}
    for key, value in raw.items():
        if len(clean) >= _METADATA_MAX_KEYS:
            break
        if isinstance(value, str):
            clean[str(key)] = value[:_METADATA_MAX_TEXT]
        elif isinstance(value, bool | int | float):
            clean[str(key)] = value
    return clean


class ModelHandle(Protocol):
    """The attempt's model calls, made in this process: Seatrial's gateway bound to the attempt.

    A ``model:`` agent calls it instead of POSTing to the gateway's proxy: the call goes
    through the same pipeline (routing, limits, budget, cache, cassette, faults, pricing), its
    ``chat`` span lands in the attempt's trace, its ledger row names the attempt, and the
    attempt's end ends it. Defined here, where adapters can see it; the runner provides it
    (``seatrial.gateway.RunGateway``), so this package never imports the gateway.
    """

    async def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        """Answer an OpenAI ``/v1/chat/completions`` body (never streamed) with a
        ``chat.completion`` object.

        Raises:
            seatrial.errors.ModelCallFailed: the call failed; it carries the status and error
                type the proxy would have answered.
        """
        ...


@runtime_checkable
class UserTurns(Protocol):
    """Where an attempt's user messages come from: the case's written turns
    (:class:`FixedTurns`), or a simulated user that answers the agent's replies."""

    async def next(self, reply: str | None) -> str | None:
        """The next user message after the agent's ``reply`` (None before the first turn);
        None ends the conversation."""
        ...


class FixedTurns:
    """The case's written turns, one after the other, whatever the agent replied."""

    def __init__(self, turns: list[str]) -> None:
        self._turns = iter(turns)

    async def next(self, reply: str | None) -> str | None:
        """The next written turn, or None after the last."""
        return next(self._turns, None)


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
    """The attempt's OpenAI base URL on the gateway proxy (``seatrial run --gateway``), for
    agents that call models themselves (python:, http:)."""
    model: ModelHandle | None = None
    """The attempt's model calls in this process, when the run has a gateway: what a
    ``model:`` agent calls (no socket, no proxy)."""
    agent_metadata: dict[str, Any] | None = None
    """What the agent said about itself during the attempt (``Session.describe`` or the
    protocol response's ``metadata``): version, prompt and tool-schema hashes, model. The
    runner stores it in the attempt's snapshot, even when the attempt then failed."""
    user: UserTurns | None = None
    """Who speaks for the user: None means the case's written turns; the runner sets a
    simulated user for a case with ``user_simulator``."""

    def user_turns(self) -> UserTurns:
        """The source of this attempt's user messages; the conversation loop
        (``agent/_turns.py``) asks it for each next turn, whichever adapter answers."""
        return self.user if self.user is not None else FixedTurns(self.case.user_turns)


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
