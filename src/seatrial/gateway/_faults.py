"""Fault injection: make model calls slow, fail, or answer badly, to test how an agent copes.

A fault is chosen per call from ``gateway.faults``: the first spec whose model, case, call
number and probability all match. Probabilities are drawn from a hash of the seed, the spec
and the call (case, attempt, model, call number), not from a shared random stream, so the
same run with the same seed gets the same faults however its attempts interleave.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading

from seatrial.errors import ProviderError
from seatrial.gateway._config import FaultSpec
from seatrial.gateway._types import ChatRequest, ChatResponse, ChatToolCall, Message

_UNIT = float(1 << 64)


class FaultInjector:
    """Picks the fault (if any) for a call, and applies it before and after the call."""

    def __init__(self, specs: list[FaultSpec], seed: int = 0) -> None:
        """Inject ``specs`` (first match wins); ``seed`` fixes the probabilistic ones."""
        self._specs = list(specs)
        self._seed = seed
        self._lock = threading.Lock()
        self._calls: dict[tuple[str | None, str | None, int | None], int] = {}

    @property
    def active(self) -> bool:
        """Whether any fault is configured."""
        return bool(self._specs)

    def call_number(self, request: ChatRequest) -> int:
        """Count a call of the request's attempt: 1 for its first model call, then 2, ..."""
        key = (request.run_id, request.case_id, request.attempt)
        with self._lock:
            number = self._calls[key] = self._calls.get(key, 0) + 1
        return number

    def pick(self, request: ChatRequest, model: str, call_index: int) -> FaultSpec | None:
        """The fault to inject into call ``call_index`` (1-based, within the attempt) of
        ``model``, or None."""
        for position, spec in enumerate(self._specs):
            if spec.model is not None and spec.model != model:
                continue
            if spec.case_id is not None and spec.case_id != request.case_id:
                continue
            if spec.call is not None and spec.call != call_index:
                continue
            if spec.probability is not None:
                draw = self._draw(position, request, model, call_index)
                if draw >= spec.probability:
                    continue
            return spec
        return None

    async def before_call(self, fault: FaultSpec) -> None:
        """Apply the part of a fault that comes before the provider answers.

        ``latency`` waits, then lets the call go ahead; ``timeout`` waits, then fails as a
        timed-out call; ``http_429`` and ``http_500`` fail as the provider would.
        """
        if fault.kind in ("latency", "timeout") and fault.latency_ms > 0:
            await asyncio.sleep(fault.latency_ms / 1000)
        if fault.kind == "timeout":
            raise ProviderError(
                f"injected fault: the call timed out after {fault.latency_ms:.0f} ms "
                "(gateway.faults); remove the fault to call the model normally",
                kind="timeout",
                retryable=True,
            )
        if fault.kind == "http_429":
            raise ProviderError(
                "injected fault: HTTP 429 Too Many Requests (gateway.faults); remove the "
                "fault to call the model normally",
                kind="rate_limited",
                status=429,
                retryable=True,
            )
        if fault.kind == "http_500":
            raise ProviderError(
                "injected fault: HTTP 500 Internal Server Error (gateway.faults); remove "
                "the fault to call the model normally",
                kind="server_error",
                status=500,
                retryable=True,
            )

    def after_call(
        self, fault: FaultSpec, response: ChatResponse, request: ChatRequest | None = None
    ) -> ChatResponse:
        """Apply the part of a fault that changes the answer, and mark the answer with it.

        ``empty``: no text and no tool calls. ``malformed_tool_call``: tool call arguments
        that are not JSON; an answer without tool calls gets one, to the request's first
        tool when ``request`` is given.
        """
        message = response.message
        update: dict[str, object] = {"fault": fault.kind}
        if fault.kind == "empty":
            update["message"] = Message(role="assistant", content="")
            update["finish_reason"] = "stop"
        elif fault.kind == "malformed_tool_call":
            calls = [
                call.model_copy(update={"arguments": malformed(call.arguments)})
                for call in message.tool_calls
            ] or [
                ChatToolCall(id="call_fault_0", name=_first_tool(request), arguments=malformed(""))
            ]
            update["message"] = message.model_copy(update={"tool_calls": calls})
            update["finish_reason"] = "tool_calls"
        return response.model_copy(update=update)

    def _draw(self, position: int, request: ChatRequest, model: str, call_index: int) -> float:
        material = json.dumps(
            [self._seed, position, request.case_id, request.attempt, model, call_index]
        )
        digest = hashlib.sha256(material.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") / _UNIT


def malformed(arguments: str) -> str:
    """Tool call arguments that no JSON parser accepts, close to what was asked for."""
    text = arguments.rstrip()
    # An object without its closing brace is what a truncated generation looks like.
    broken = text[:-1] if text.endswith("}") else "{" + text
    try:
        json.loads(broken)
    except ValueError:
        return broken
    return "{"


def _first_tool(request: ChatRequest | None) -> str:
    for tool in (request.tools or []) if request is not None else []:
        name = tool.get("function", {}).get("name") if isinstance(tool, dict) else None
        if isinstance(name, str) and name:
            return name
    return "unknown_tool"
