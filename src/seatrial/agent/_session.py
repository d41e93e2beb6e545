"""What a Python agent function receives with each user turn."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Any

from seatrial.agent._errors import ToolError
from seatrial.agent._faults import (
    FaultPlan,
    fault_arguments,
    inject,
    parameters_schema,
    signature_schema,
)
from seatrial.agent._policy import WRITE_TOOLS, PermissionPolicy
from seatrial.agent._protocol import AttemptContext, clean_metadata, content_hash
from seatrial.agent._sandbox import EVENT_KINDS, SANDBOX_TOOLS, Sandbox
from seatrial.agent._tool import refuse_tool_call, registered_tool
from seatrial.case import ToolFault
from seatrial.trace import Span, TraceRecorder
from seatrial.trace import attrs as A


class ModelCallSpan:
    """The open ``chat {model}`` span of one model call; report what the call used."""

    def __init__(self, span: Span) -> None:
        self.span = span

    def report(
        self,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        response_model: str | None = None,
        cost_usd: float | None = None,
        finish_reasons: list[str] | None = None,
    ) -> None:
        """Record token usage, the model that answered and, when known, the cost."""
        attributes = self.span.attributes
        if input_tokens is not None:
            attributes[A.INPUT_TOKENS] = int(input_tokens)
        if output_tokens is not None:
            attributes[A.OUTPUT_TOKENS] = int(output_tokens)
        if response_model is not None:
            attributes[A.RESPONSE_MODEL] = response_model
        if cost_usd is not None:
            attributes[A.COST_USD] = float(cost_usd)
        if finish_reasons is not None:
            attributes[A.FINISH_REASONS] = list(finish_reasons)


class Session:
    """One attempt as a Python agent sees it; the same object is passed to every turn."""

    def __init__(
        self, ctx: AttemptContext, tools: dict[str, Callable[..., Any]] | None = None
    ) -> None:
        self._ctx = ctx
        self.tools: dict[str, Callable[..., Any]] = tools if tools is not None else {}
        """This attempt's own tools by name (a ``model:`` agent's implementations), found
        before sandbox and ``@seatrial.tool`` ones; each records its own ``execute_tool``
        span."""
        self.state: dict[str, Any] = {}
        """Anything the agent wants to keep between the turns of this attempt."""
        self.final_state: dict[str, Any] | None = None
        """External state to report at the end (orders created ...); side_effect checks it."""
        self.turn_index = 0
        """0-based index of the user turn being answered."""
        self.policy = ctx.sandbox.policy if ctx.sandbox is not None else PermissionPolicy(ctx.case)
        """The attempt's permission policy (shared with the sandbox)."""
        self.tool_schemas: dict[str, Any] = {}
        """Tool schemas by name, as sent to the model (a ``model:`` agent sets them): an
        injected fault's message names a real parameter and its allowed values."""
        self._faults = FaultPlan(ctx.case.tool_faults)

    @property
    def session_id(self) -> str:
        """The conversation id, the same for every turn of the attempt."""
        return self._ctx.session_id

    @property
    def user_id(self) -> str:
        """The user id (with its fresh_user suffix unless the case fixes the user)."""
        return self._ctx.user_id

    @property
    def case_id(self) -> str:
        """The case being run."""
        return self._ctx.case.id

    @property
    def attempt(self) -> int:
        """1-based repeat number."""
        return self._ctx.attempt

    @property
    def context(self) -> dict[str, Any]:
        """The case's ``context`` (user profile, existing orders ...)."""
        return self._ctx.case.context

    @property
    def env(self) -> str:
        """dev, staging or production."""
        return self._ctx.case.env

    @property
    def workspace(self) -> Path | None:
        """The attempt's workspace folder, when the case has one."""
        return self._ctx.workspace

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox tools, when the case has a workspace."""
        return self._ctx.sandbox

    @property
    def gateway_url(self) -> str | None:
        """This attempt's OpenAI base URL on Seatrial's gateway, when the run has one.

        ``seatrial run --gateway`` sets it; model calls made through it are recorded as
        ``chat`` spans of this attempt, priced, and subject to the gateway's cache, cassettes
        and faults::

            client = openai.OpenAI(base_url=session.gateway_url or None)
        """
        return self._ctx.gateway_url

    @property
    def recorder(self) -> TraceRecorder:
        """The attempt's trace recorder, for spans the helpers here do not cover."""
        return self._ctx.recorder

    def call_tool(self, name: str, /, **arguments: Any) -> Any:
        """Call a sandbox tool or a registered ``@seatrial.tool`` function by name.

        The call is recorded and checked against the permission policy; a refusal raises
        :class:`ToolDenied`, any other failure :class:`ToolError`. A call the case's
        ``tool_faults`` names gets the fault instead of reaching the tool.
        """
        due = self._faults.take(name)
        if due is not None:
            return self._inject(*due, arguments)
        return self._dispatch(name, arguments)

    def _dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        own = self.tools.get(name)
        if own is not None and inspect.iscoroutinefunction(own):
            message = f"`{name}` is async; use `await session.call_tool_async(...)`"
            raise self._refuse(name, arguments, message, "invalid_call")
        if own is not None:
            with self.policy.activate():
                return own(**arguments)
        if name in SANDBOX_TOOLS and self.sandbox is not None:
            return self.sandbox.call(name, **arguments)
        info = registered_tool(name)
        if info is not None and info.is_async:
            message = f"`{name}` is async; use `await session.call_tool_async(...)`"
            raise self._refuse(name, arguments, message, "invalid_call")
        if info is not None:
            with self.policy.activate():
                return info.function(**arguments)
        raise self._refuse(name, arguments, self._unknown(name), "unknown_tool")

    async def call_tool_async(self, name: str, /, **arguments: Any) -> Any:
        """:meth:`call_tool` for async agents; async ``@seatrial.tool`` functions are awaited."""
        due = self._faults.take(name)
        if due is not None:
            return self._inject(*due, arguments)
        own = self.tools.get(name)
        if own is not None and inspect.iscoroutinefunction(own):
            with self.policy.activate():
                return await own(**arguments)
        info = None if own is not None else registered_tool(name)
        if info is not None and info.is_async and not (name in SANDBOX_TOOLS and self.sandbox):
            with self.policy.activate():
                return await info.function(**arguments)
        # Sandbox and sync tools may block (run_command waits up to its timeout): keep the
        # event loop free for the other attempts.
        return await asyncio.to_thread(self._dispatch, name, arguments)

    def model_call(
        self, model: str, *, provider: str | None = None, **attributes: Any
    ) -> AbstractContextManager[ModelCallSpan]:
        """Record a ``chat {model}`` span around a model call; report usage on what it yields.

        ::

            with session.model_call("gpt-4o", provider="openai") as call:
                reply = client.chat.completions.create(...)
                call.report(input_tokens=reply.usage.prompt_tokens,
                            output_tokens=reply.usage.completion_tokens,
                            response_model=reply.model)
        """
        span_attributes: dict[str, Any] = {A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: model}
        if provider:
            span_attributes[A.PROVIDER_NAME] = provider
        span_attributes.update(attributes)
        return _ModelCallBlock(self.recorder.span(f"chat {model}", span_attributes))

    def describe(
        self,
        *,
        version: str | int | None = None,
        prompt: Any = None,
        tools: Any = None,
        model: str | None = None,
        **other: str | int | float | bool,
    ) -> None:
        """Say what this agent is; stored in the attempt's snapshot (``seatrial rerun``).

        The prompt and the tool schemas are stored as hashes, never as text: a changed
        prompt shows as a changed ``prompt_hash`` when an attempt is replayed::

            session.describe(version="2", prompt=SYSTEM_PROMPT, tools=TOOLS, model="gpt-4o")

        ``prompt`` is a text (or messages, hashed as JSON), ``tools`` the tool schemas as
        sent to the model; ``other`` adds scalar facts of your own. Calling it again adds to
        (and overrides) what was said before.
        """
        said: dict[str, Any] = dict(other)
        if version is not None:
            said["agent_version"] = str(version)
        if prompt is not None:
            said["prompt_hash"] = content_hash(prompt)
        if tools is not None:
            said["tool_schema_hash"] = content_hash(tools)
        if model is not None:
            said["model"] = model
        self._ctx.agent_metadata = {**(self._ctx.agent_metadata or {}), **clean_metadata(said)}

    def skill(self, name: str) -> None:
        """Record routing evidence: the agent routed this turn to skill ``name``."""
        self.recorder.event(A.SKILL, {A.SKILL_NAME: name})

    def _inject(self, fault: ToolFault, number: int, arguments: dict[str, Any]) -> Any:
        """Answer a faulted call in place of the tool (agent/_faults.py)."""
        name = fault.tool
        sent = dict(arguments)
        own, info = self.tools.get(name), registered_tool(name)
        schema = parameters_schema(self.tool_schemas.get(name))
        registered = False
        if name in SANDBOX_TOOLS and self.sandbox is not None and own is None:
            method = getattr(self.sandbox, name)
            write, kind = name in WRITE_TOOLS, EVENT_KINDS.get(name)
        else:
            # A model agent's python implementation may be the @seatrial.tool itself.
            # (behind its argument check: the check's wrapper names it as __wrapped__)
            registered = info is not None and (
                own is None
                or own is info.function
                or getattr(own, "__wrapped__", None) is info.function
            )
            method = own or (info.function if info is not None else None)
            write = registered and info is not None and not info.read_only
            kind = info.event_kind if registered and info is not None else None
        if schema is None and method is not None:
            schema = signature_schema(method)
        if method is not None and (own is None or registered):
            # Recorded as the tool itself records its calls (defaults filled in), so that an
            # identical retry reads identical in the trace.
            arguments = fault_arguments(inspect.signature(method), arguments)
        return inject(
            fault,
            number,
            arguments,
            recorder=self.recorder,
            policy=self.policy,
            schema=schema,
            write=write,
            event_kind=kind,
            sent=sent,
        )

    def _unknown(self, name: str) -> str:
        if name in SANDBOX_TOOLS:
            return (
                f"`{name}` is a sandbox tool but this case has no workspace; give the case a "
                "`fixture` or list the tool in `allowed_tools`"
            )
        return f"no tool `{name}`: decorate the function with @seatrial.tool"

    def _refuse(
        self, name: str, arguments: dict[str, Any], message: str, error_type: str
    ) -> ToolError:
        """Record a call that cannot be made as a failed span; return the error to raise."""
        return refuse_tool_call(self.recorder, name, arguments, message, error_type)


class _ModelCallBlock:
    """The block of :meth:`Session.model_call`: a class, not a generator, because it is
    entered for every model call of every attempt and a generator costs several times more."""

    __slots__ = ("_span",)

    def __init__(self, span: AbstractContextManager[Span]) -> None:
        self._span = span

    def __enter__(self) -> ModelCallSpan:
        return ModelCallSpan(self._span.__enter__())

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._span.__exit__(kind, exc, tb)
