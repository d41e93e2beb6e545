"""``http://host:port/path``: an agent behind the agent protocol (one POST per user turn).

Request::

    {"session_id", "user_id", "message",
     "context": {"channel": "eval", "env": ..., **case.context,
                 "gateway_base_url": ...},   # only under `seatrial run --gateway`
     "metadata": {"case_id", "run_id", "replay_id"}}   # replay_id: run_id, deprecated

Response::

    {"session_id", "response", "trace_id", "finished",
     "tools_called": [{"name", "input", "output", "latency_ms", "success"}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens"},
     "final_state": {...},          # Seatrial's extension, optional
     "metadata": {"agent_version", "prompt_hash", "tool_schema_hash", "model"}}  # optional

Every POST carries a W3C ``traceparent`` header naming the attempt's trace and the span open
for the turn, so an agent instrumented with OpenTelemetry continues the attempt's trace and
the spans it exports join it in the store (unless the configured headers hold their own).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from seatrial._http_client import proxy_for
from seatrial.agent._protocol import AgentOutput, AttemptContext, clean_metadata
from seatrial.agent._retry import RETRY_EVENT, AgentResponse, AgentRetry, post_with_retries
from seatrial.agent._turns import converse
from seatrial.errors import AgentError, AgentSpecError
from seatrial.i18n import gettext as _
from seatrial.record import DEFAULT_CONCURRENCY
from seatrial.trace import Span, add_usage, record_tools_called

if TYPE_CHECKING:
    from seatrial.agent._plain import PlainConnections
    from seatrial.agent._transport import AgentConnections

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BODY_LIMIT = 200
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")
TRACEPARENT = "traceparent"
"""The W3C trace-context header (https://www.w3.org/TR/trace-context/)."""


def resolve_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Header values with ``${NAME}`` replaced from the environment.

    A missing variable is an :class:`AgentSpecError` that names the variable, never a value.
    """
    resolved: dict[str, str] = {}
    for key, value in (headers or {}).items():

        def lookup(match: re.Match[str], header: str = key) -> str:
            name = match.group(1)
            if name not in os.environ:
                raise AgentSpecError(
                    _(
                        "header `{header}` refers to {reference}, which is not set; "
                        "export {name} before running"
                    ).format(header=header, reference="${" + name + "}", name=name)
                )
            return os.environ[name]

        resolved[str(key)] = _ENV_REFERENCE.sub(lookup, str(value))
    return resolved


def traceparent(trace_id: str, span_id: str) -> str | None:
    """The ``traceparent`` value naming a span of a trace, sampled; None when the ids are
    not W3C ids (32 and 16 lower-case hex digits, not all zero), which agents would drop.
    """
    if not (_TRACE_ID.fullmatch(trace_id) and _SPAN_ID.fullmatch(span_id)):
        return None
    if not (trace_id.strip("0") and span_id.strip("0")):
        return None
    return f"00-{trace_id}-{span_id}-01"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _BODY_LIMIT else text[:_BODY_LIMIT] + "..."


class HttpAgent:
    """Drives an agent over HTTP with one shared connection pool (aiohttp's:
    ``seatrial.agent._transport``).

    ``transport`` replaces the network: an ``httpx.MockTransport`` (or any
    ``httpx.AsyncBaseTransport``) answers the posts in-process, so a test needs no server.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout_s: float | None = None,
        name: str | None = None,
        spec: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: AgentRetry | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AgentSpecError(
                _("`{url}` is not an http(s) URL; write http://host:port/path").format(url=url)
            )
        self.url = url
        self.spec = spec or url
        self.name = name or parts.netloc
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._headers = resolve_headers(headers)
        # A traceparent the user configured is theirs to send: Seatrial's would replace it.
        self._sends_traceparent = all(k.lower() != TRACEPARENT for k in self._headers)
        self._concurrency = max(1, concurrency)
        self._timeout_s = timeout_s
        self._transport = transport
        self._retry = retry or AgentRetry()
        self._client: httpx.AsyncClient | None = None
        self._connections: AgentConnections | PlainConnections | None = None

    async def _send(self, payload: dict[str, Any], headers: dict[str, str]) -> AgentResponse:
        """One POST of ``payload``: through the plain HTTP/1.1 pool for an ``http://`` agent
        reached without a proxy (seatrial.agent._plain), through aiohttp's otherwise
        (seatrial.agent._transport), or through an httpx client over the ``transport`` a test
        plugged in."""
        if self._transport is not None:
            if self._client is None:
                connect = min(self._timeout_s, 10.0) if self._timeout_s else 10.0
                timeout = httpx.Timeout(self._timeout_s, connect=connect, pool=None)
                self._client = httpx.AsyncClient(
                    headers=self._headers, timeout=timeout, transport=self._transport
                )
            return await self._client.post(self.url, json=payload, headers=headers)
        if self._connections is None:
            self._connections = self._open_connections()
        return await self._connections.post(payload, headers)

    def _open_connections(self) -> AgentConnections | PlainConnections:
        """The pool this agent's posts go through (see :meth:`_send`)."""
        if self.url.startswith("http:") and proxy_for(self.url) is None:
            from seatrial.agent._plain import PlainConnections

            pool: type[AgentConnections | PlainConnections] = PlainConnections
        else:
            from seatrial.agent._transport import AgentConnections

            pool = AgentConnections
        return pool(
            self.url,
            concurrency=self._concurrency,
            headers=self._headers,
            timeout_s=self._timeout_s,
        )

    async def check(self) -> None:
        """Open (and close) a TCP connection to the agent's host and port; nothing is posted.

        With a ``transport`` there is no host to reach, so there is nothing to check.
        """
        if self._transport is not None:
            return
        try:
            _reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self._host, self._port), timeout=10
            )
        except (OSError, TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__
            raise AgentSpecError(
                _("agent unreachable at {url}: {why}; start the agent or fix the URL").format(
                    url=self.url, why=reason
                )
            ) from exc
        writer.close()
        await writer.wait_closed()

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """POST every user turn with the same session id; record tools and usage."""
        root = ctx.recorder.current_span
        final_state: dict[str, Any] | None = None
        context = {"channel": "eval", "env": ctx.case.env, **ctx.case.context}
        if ctx.gateway_url is not None:
            # The agent's model calls should go through the gateway to land in this trace.
            context["gateway_base_url"] = ctx.gateway_url

        async def answer(message: str, index: int) -> str:
            nonlocal final_state
            body = await self._answer(ctx, root, context, message, index)
            if body.get("final_state") is not None:
                final_state = body["final_state"]
            reply: str = body["response"]
            return reply

        responses = await converse(ctx, answer)
        return AgentOutput(responses=responses, final_state=final_state)

    async def _answer(
        self,
        ctx: AttemptContext,
        root: Span | None,
        context: dict[str, Any],
        message: str,
        index: int,
    ) -> dict[str, Any]:
        """POST one user turn; record the tools and usage it reports; its checked body."""
        payload = {
            "session_id": ctx.session_id,
            "user_id": ctx.user_id,
            "message": message,
            "context": context,
            # ``replay_id`` is the old name of ``run_id``, still sent so agents that read
            # it keep working until they move to ``run_id``.
            "metadata": {"case_id": ctx.case.id, "run_id": ctx.run_id, "replay_id": ctx.run_id},
        }
        started = time.time_ns()
        body = await self._post(
            payload,
            index,
            self._trace_headers(ctx),
            lambda attributes: ctx.recorder.event(RETRY_EVENT, attributes),
        )
        finished = time.time_ns()
        try:
            record_tools_called(
                ctx.recorder,
                body.get("tools_called"),
                start_time_unix_nano=started,
                end_time_unix_nano=finished,
                turn_index=index,
            )
            if root is not None:
                add_usage(root, body.get("usage"))
        except ValueError as exc:
            raise AgentError(f"agent at {self.url} answered turn {index + 1}: {exc}") from exc
        if body.get("final_state") is not None and not isinstance(body["final_state"], dict):
            raise AgentError(f"agent at {self.url} answered a `final_state` that is not an object")
        metadata = body.get("metadata")
        if metadata is not None:
            if not isinstance(metadata, dict):
                raise AgentError(
                    f"agent at {self.url} answered a `metadata` that is not an object on "
                    f"turn {index + 1}; send an object (see docs/agents.md) or leave it out"
                )
            ctx.agent_metadata = {**(ctx.agent_metadata or {}), **clean_metadata(metadata)}
        return body

    def _trace_headers(self, ctx: AttemptContext) -> dict[str, str]:
        """The ``traceparent`` of this turn: the attempt's trace and its open span."""
        span = ctx.recorder.current_span
        if not self._sends_traceparent or span is None:
            return {}
        value = traceparent(ctx.recorder.trace_id, span.span_id)
        return {TRACEPARENT: value} if value is not None else {}

    async def _post(
        self,
        payload: dict[str, Any],
        index: int,
        headers: dict[str, str],
        on_retry: Callable[[dict[str, Any]], None],
    ) -> dict[str, Any]:
        turn = f"turn {index + 1}"
        try:
            response = await post_with_retries(
                lambda: self._send(payload, headers),
                self._retry,
                on_retry,
            )
        except httpx.TimeoutException as exc:
            raise AgentError(
                f"agent at {self.url} did not answer {turn} in time ({type(exc).__name__})",
                "timeout",
            ) from exc
        except httpx.ConnectError as exc:
            raise AgentError(
                f"agent unreachable at {self.url}: {exc}; start the agent or fix the URL"
            ) from exc
        except httpx.HTTPError as exc:
            raise AgentError(
                f"HTTP exchange with the agent at {self.url} failed on {turn}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if response.status_code >= 400:
            raise AgentError(
                f"agent at {self.url} answered HTTP {response.status_code} on {turn}: "
                f"{_short(response.text)}"
            )
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise AgentError(
                f"agent at {self.url} answered non-JSON on {turn} (HTTP {response.status_code}): "
                f"{_short(response.text)}"
            ) from exc
        except (ValueError, RecursionError) as exc:
            # json's own limits: an integer of more than 4,300 digits, nesting past the stack
            raise AgentError(
                f"agent at {self.url} answered JSON Seatrial cannot read on {turn} "
                f"({'nested too deeply' if isinstance(exc, RecursionError) else exc}): "
                f"{_short(response.text)}"
            ) from exc
        if not isinstance(body, dict):
            raise AgentError(
                f"agent at {self.url} answered {type(body).__name__} on {turn}, not a JSON "
                f"object: {_short(response.text)}"
            )
        if not isinstance(body.get("response"), str):
            what = "has no `response`" if "response" not in body else "has a non-string `response`"
            raise AgentError(
                f"agent at {self.url} answered JSON that {what} on {turn}: {_short(response.text)}"
            )
        return body

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._connections is not None:
            await self._connections.aclose()
            self._connections = None
