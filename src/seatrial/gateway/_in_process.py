"""Model calls made in this process: the gateway bound to one attempt, no proxy in between.

A ``model:`` agent, a simulated user and the judge run inside Seatrial; their calls need no
socket. :class:`RunGateway` is a run's gateway as its attempts use it: each attempt is
registered (as the proxy registers it) and gets :class:`AttemptModel`, ``Gateway.chat``
bound to it (``seatrial.agent.ModelHandle``), and, when a proxy serves the run for agents
that call a URL themselves, its base URL there. An in-process call is the proxied call
without the two JSON round trips: the same request reading and model resolution, the same
``chat`` span in the attempt's trace, ledger row, cassette line and error type, and the
attempt's end ends it (a timed-out attempt's call is recorded in the cassette as cut off).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seatrial.errors import GatewayError, ModelCallFailed
from seatrial.gateway._attempts import ATTEMPT_ENDED, AttemptBinding, AttemptRegistry
from seatrial.gateway._proxy import AttemptEnded, error_status, resolve_model
from seatrial.gateway._types import ChatRequest, ChatResponse
from seatrial.gateway._wire import chat_request_from_openai, chat_response_to_openai
from seatrial.trace import TraceRecorder

if TYPE_CHECKING:
    from seatrial.gateway._gateway import Gateway
    from seatrial.gateway._server import GatewayServer


class AttemptModel:
    """``Gateway.chat`` bound to one attempt: OpenAI's chat body in, ``chat.completion`` out.

    Raises :class:`~seatrial.errors.ModelCallFailed` with the status and error type the
    proxy would have answered (``unparsable_output``, ``budget_exceeded`` ...).
    """

    def __init__(self, gateway: Gateway, binding: AttemptBinding) -> None:
        self._gateway = gateway
        self._binding = binding

    async def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one chat request of the attempt, whole."""
        binding = self._binding
        try:
            if body.get("stream"):
                raise GatewayError(
                    "an in-process model call is answered whole: leave `stream` out, or call "
                    "the attempt's gateway URL to stream"
                )
            request = chat_request_from_openai(
                body, run_id=binding.run_id, case_id=binding.case_id, attempt=binding.attempt
            )
            model = resolve_model(self._gateway.config, request.model)
            request = request.model_copy(update={"model": model})
            # The call's task inherits the recorder: its span lands in this attempt's trace.
            with binding.recorder.activate():
                response = await self._in_attempt(request)
        except GatewayError as exc:
            status, error_type = error_status(exc)
            raise ModelCallFailed(str(exc), status=status, error_type=error_type) from exc
        return chat_response_to_openai(response, body.get("model"))

    async def _in_attempt(self, request: ChatRequest) -> ChatResponse:
        """The call as a task of the attempt's, so the attempt's end (its registry) cancels
        it and waits for it, as it does a proxied call.

        The caller giving up (its attempt's deadline passed while it waited) ends the call the
        same way: cancelled as ended, so the cassette records it as cut off and a replay
        times out again instead of getting an answer that came after the attempt.
        """
        binding = self._binding
        task = asyncio.ensure_future(self._until_ended(request))
        binding.calls.add(task)
        # Left in the attempt's calls until it ended: the runner waits for it before it
        # reads the trace, so the call's span is closed by then.
        task.add_done_callback(binding.calls.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                task.cancel(ATTEMPT_ENDED)
                raise
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                raise AttemptEnded(ATTEMPT_ENDED) from None
            raise

    async def _until_ended(self, request: ChatRequest) -> ChatResponse:
        started = time.monotonic()
        try:
            return await self._gateway.chat(request)
        except asyncio.CancelledError as exc:
            if exc.args == (ATTEMPT_ENDED,):
                self._gateway.cut_off(request, time.monotonic() - started)
            raise


@dataclass(frozen=True)
class AttemptCalls:
    """What one attempt calls models through."""

    model: AttemptModel
    """Its in-process model calls."""
    url: str | None
    """Its OpenAI base URL on the run's proxy; None when no proxy serves the run."""


class RunGateway:
    """A run's gateway as its attempts use it: in process, and through ``server`` when a
    proxy serves the run (``--gateway``: agents that call a URL themselves).

    Without a server nothing listens: no socket, and nothing keeps the run in one process
    (a forked worker opens its own with :meth:`Gateway.for_process`).
    """

    def __init__(self, gateway: Gateway, server: GatewayServer | None = None) -> None:
        self.gateway = gateway
        self.server = server
        self.registry = server.registry if server is not None else AttemptRegistry()
        """The attempts running now (the proxy's, when there is one: one registry)."""

    @contextmanager
    def attempt(
        self, recorder: TraceRecorder, run_id: str, case_id: str, attempt: int
    ) -> Iterator[AttemptCalls]:
        """Register an attempt for a block; yields its model handle and proxy URL."""
        with self.registry.attempt(recorder, run_id, case_id, attempt) as binding:
            try:
                url = self.server.attempt_base_url(binding) if self.server is not None else None
                yield AttemptCalls(AttemptModel(self.gateway, binding), url)
            finally:
                self.gateway.forget_attempt(run_id, case_id, attempt)

    async def end_calls(self, recorder: TraceRecorder) -> None:
        """Cancel (and wait for) the model calls still in flight of the attempt recording
        into ``recorder``, in process or proxied: a timed-out agent leaves them behind."""
        await self.registry.end_calls(recorder)
