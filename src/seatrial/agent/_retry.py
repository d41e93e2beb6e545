"""Posting a turn again when the agent could not take it: transient answers, retried.

Which answers are transient (docs/agents.md, "Retries"):

- HTTP 429, 502, 503 and 504 (``AgentRetry.on_status``): the agent, or a proxy in front of
  it, says it is overloaded, restarting or unreachable; the turn was not answered. A
  ``Retry-After`` header (seconds, fractions allowed, or an HTTP date; read by
  :func:`seatrial._http.retry_after_s`) sets the wait.
- A connection refused, or closed before any answer came (``httpx.ConnectError``,
  ``httpx.RemoteProtocolError``): the agent was restarting, or dropped a kept-alive
  connection.

Not retried: HTTP 500 and every other status (the agent's own code failed: that is what the
run measures, an ERROR with its reason), and a read timeout (the agent is slow; the attempt's
timeout decides). Each retry is an event on the attempt's trace, so a verdict reached after
retries shows them; the verdict is the one of the answer that finally came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field

from seatrial._http import retry_after_s
from seatrial.trace import attrs as A

RETRY_EVENT = A.AGENT_RETRY
"""Name of the span event recorded for each POST of a turn that is sent again."""

TRANSIENT_ERRORS = (httpx.ConnectError, httpx.RemoteProtocolError)
"""Transport errors after which the turn is posted again: nothing was answered."""


class AgentResponse(Protocol):
    """What the adapter and its retries read of an answer: an ``httpx.Response``, or the
    lighter ``AgentAnswer`` of aiohttp's pool (``seatrial.agent._transport``)."""

    status_code: int

    @property
    def headers(self) -> httpx.Headers:
        """The answer's headers."""
        ...

    @property
    def text(self) -> str:
        """The body as text."""
        ...

    def json(self) -> Any:
        """The body parsed as JSON."""
        ...

    async def aclose(self) -> None:
        """Release the answer."""
        ...


R = TypeVar("R", bound=AgentResponse)


class AgentRetry(BaseModel):
    """How an HTTP agent's turn is posted again after a transient answer (seatrial.yaml
    ``agents: NAME: retry:``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tries: int = Field(default=4, ge=1)
    """POSTs of one turn at most, the first included; 1 never retries."""
    backoff_s: float = Field(default=0.5, ge=0)
    """Wait before the first retry; each further retry waits twice the one before."""
    max_wait_s: float = Field(default=30.0, ge=0)
    """The longest wait before a retry; a ``Retry-After`` asking more gives up at once."""
    on_status: tuple[int, ...] = (429, 502, 503, 504)
    """HTTP statuses that are transient; any other status is the agent's answer."""


async def post_with_retries(
    post: Callable[[], Awaitable[R]],
    settings: AgentRetry,
    on_retry: Callable[[dict[str, Any]], None],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> R:
    """``post()`` until it gives an answer that is not transient, or ``settings.tries`` run
    out; the last response is returned and the last transport error raised.

    ``on_retry`` receives the event attributes of each retry (``seatrial.agent_retry.try``,
    ``.reason``, ``.wait_s``) before its wait.
    """
    for tried in range(1, settings.tries + 1):
        last_try = tried == settings.tries
        backoff = settings.backoff_s * 2 ** (tried - 1)
        try:
            response = await post()
        except TRANSIENT_ERRORS as exc:
            if last_try:
                raise
            reason = f"{type(exc).__name__}: {exc}"
            wait = backoff
        else:
            if response.status_code not in settings.on_status or last_try:
                return response
            reason = f"HTTP {response.status_code}"
            asked = retry_after_s(response.headers.get("retry-after"))
            if asked is not None and asked > settings.max_wait_s:
                return response  # the agent is away for longer than the run would wait
            wait = asked if asked is not None else backoff
            await response.aclose()
        wait = min(wait, settings.max_wait_s)
        on_retry(
            {
                A.AGENT_RETRY_TRY: tried,
                A.AGENT_RETRY_REASON: reason[:200],
                A.AGENT_RETRY_WAIT_S: round(wait, 3),
            }
        )
        await sleep(wait)
    raise AssertionError("unreachable: the last try returns or raises")
