"""``model:NAME``: an agent made of a model, a system prompt and tools, run by Seatrial.

For each user message the model is called through the attempt's model handle
(``AttemptContext.model``: Seatrial's gateway bound to the attempt, in this process, no
socket) with the conversation so far and the tool schemas; each tool call it asks for is
executed through :meth:`Session.call_tool_async` (recorded as an ``execute_tool`` span,
checked by the permission policy) and its result fed back, until the model answers without
tool calls.
The gateway records the model calls (tokens, cost, cassettes), so this module records none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seatrial.agent._model_impl import Implementation, implementation
from seatrial.agent._model_text_calls import text_tool_calls
from seatrial.agent._model_tools import load_tools
from seatrial.agent._protocol import AgentOutput, AttemptContext, ModelHandle
from seatrial.agent._session import Session
from seatrial.agent._tool import refuse_tool_call
from seatrial.agent._turns import converse, execute_tool_call, tool_error_content
from seatrial.case import MODEL_PREFIX, ModelAgentSettings
from seatrial.errors import AgentError, AgentSpecError, ModelCallFailed, ModelFailure
from seatrial.i18n import gettext as _

_SHOWN = 300
MALFORMED_TOOL_CALL = "malformed_tool_call"
"""The failure type of a tool call the model wrote as text, or its server could not parse."""
_UNPARSABLE = "unparsable_output"
"""The gateway's error type for a model answer its server could not parse."""


class ModelAgent:
    """Runs a model with a system prompt and tools through Seatrial's gateway.

    ``spec`` is ``model:NAME``, NAME the model under seatrial.yaml ``models:`` that the gateway
    calls (``model``); ``name`` a named agent's name (its ``spec`` as stored with runs);
    ``model_id`` the pinned id it stands for (described in the attempt's snapshot).
    ``where`` names the configuration in error messages (``seatrial.yaml:12 (agents.x)``).
    ``timeout_s`` is accepted for the resolver's sake and unused: each model call is bounded
    by its model's ``timeout_s`` in the gateway, and the attempt by the run's.
    """

    needs_gateway = True
    """``execute_suite_async`` opens the gateway for a run of this agent, in process: the
    agent calls ``AttemptContext.model``, never a proxy."""

    def __init__(
        self,
        spec: str,
        settings: ModelAgentSettings | None = None,
        *,
        name: str | None = None,
        base_dir: Path | None = None,
        model_id: str | None = None,
        where: str | None = None,
        timeout_s: float | None = None,
    ) -> None:
        # A named agent is stored by its name: a resumed run, a rerun or a worker finds its
        # prompt and tools again in seatrial.yaml (the spec alone has neither).
        self.spec = name or spec
        self.model = spec.removeprefix(MODEL_PREFIX).strip()
        if not spec.startswith(MODEL_PREFIX) or not self.model:
            raise AgentSpecError(
                _(
                    "`{spec}` is not a model agent spec; write model:NAME, NAME a model under "
                    "`models:` in seatrial.yaml"
                ).format(spec=spec)
            )
        self.name = name or self.model
        self.settings = settings or ModelAgentSettings()
        self.model_id = model_id or self.model
        self._base_dir = (base_dir or Path.cwd()).resolve()
        self._where = where or f"agent `{spec}`"
        self._prompt: str | None = None
        self._tools: list[dict[str, Any]] | None = None
        self._implementations: dict[str, Implementation] = {}

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool schemas sent to the model (OpenAI format), loaded and checked."""
        self._prepare()
        assert self._tools is not None
        return self._tools

    @property
    def system_prompt(self) -> str | None:
        """The system prompt sent first, if any."""
        self._prepare()
        return self._prompt

    def _prepare(self) -> None:
        """Read the prompt and tools and load every implementation (once); AgentSpecError
        names the setting and the fix."""
        if self._tools is not None:
            return
        settings = self.settings
        prompt = settings.system_prompt
        if settings.system_prompt_file is not None:
            file = Path(settings.system_prompt_file)
            file = file if file.is_absolute() else self._base_dir / file
            try:
                prompt = file.read_text(encoding="utf-8")
            except OSError as exc:
                raise AgentSpecError(
                    _(
                        "{where}: cannot read system_prompt_file {path}: {why}; fix the path "
                        "(relative to {folder})"
                    ).format(
                        where=self._where, path=file, why=exc.strerror or exc, folder=self._base_dir
                    )
                ) from exc
        tools = load_tools(settings.tools, self._base_dir, self._where)
        names = [tool["function"]["name"] for tool in tools]
        missing = [n for n in names if n not in settings.implementations]
        if missing:
            example = (
                "implementations: {" + missing[0] + ": python:MODULE:FUNCTION | sandbox | "
                "recorded:FILE.jsonl}"
            )
            raise AgentSpecError(
                _("{where}: tool {tools} has no implementation; add `{example}`").format(
                    where=self._where, tools=", ".join(missing), example=example
                )
            )
        extra = sorted(set(settings.implementations) - set(names))
        if extra:
            raise AgentSpecError(
                _(
                    "{where}: `implementations` names {extra}, which is not among the tools "
                    "({tools}); fix the name or add its schema"
                ).format(
                    where=self._where, extra=", ".join(extra), tools=", ".join(names) or _("none")
                )
            )
        self._implementations = {
            tool: implementation(
                tool,
                spec,
                base_dir=self._base_dir,
                unrecorded=settings.unrecorded,
                where=self._where,
            )
            for tool, spec in settings.implementations.items()
        }
        self._prompt, self._tools = prompt, tools

    async def check(self) -> None:
        """Read the prompt and tools and load every implementation; nothing is sent."""
        self._prepare()

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """Answer each user message with the model-and-tools loop."""
        self._prepare()
        if ctx.model is None:
            raise AgentError(
                "a model agent calls its model through Seatrial's gateway and this attempt has "
                "none: run it with `seatrial run` (or execute_suite_async), which open it"
            )
        model = ctx.model
        session = Session(ctx)
        session.tool_schemas = {tool["function"]["name"]: tool for tool in self.tools}
        for tool, found in self._implementations.items():
            bound = found.bind(session)
            if bound is not None:
                session.tools[tool] = bound
        session.describe(prompt=self._prompt or "", tools=self.tools, model=self.model_id)
        messages: list[dict[str, Any]] = []
        if self._prompt:
            messages.append({"role": "system", "content": self._prompt})

        async def answer(message: str, index: int) -> str:
            messages.append({"role": "user", "content": message})
            return await self._answer(model, session, messages, index)

        responses = await converse(ctx, answer, session)
        return AgentOutput(responses=responses, final_state=session.final_state)

    async def _answer(
        self, model: ModelHandle, session: Session, messages: list[dict[str, Any]], index: int
    ) -> str:
        """Call the model until it answers without tool calls; ``messages`` grows."""
        for _turn in range(self.settings.max_turns):
            said = await self._complete(model, session, messages)
            calls = said.get("tool_calls") or []
            assistant: dict[str, Any] = {"role": "assistant", "content": said.get("content")}
            if calls:
                assistant["tool_calls"] = calls
            messages.append(assistant)
            if not calls:
                content = str(said.get("content") or "")
                self._refuse_text_calls(session, content)
                return content
            for call in calls:
                content = await self._execute(session, call)
                messages.append(
                    {"role": "tool", "tool_call_id": call.get("id"), "content": content}
                )
        limit = self.settings.max_turns
        raise AgentError(
            f"no reply to user message {index + 1} after {limit} model calls (max_turns: "
            f"{limit}): the model kept calling tools; raise `max_turns` of agent `{self.name}` "
            "in seatrial.yaml if it needs more",
            "limit_exceeded",
        )

    def _refuse_text_calls(self, session: Session, content: str) -> None:
        """A reply that is a tool call written as text: the tool did not run; the model
        failed the turn (ModelFailure), each call recorded as a failed span."""
        written = text_tool_calls(content, self._implementations)
        if not written:
            return
        for name, arguments in written:
            message = (
                f"the model wrote its call to `{name}` as text in its reply instead of calling "
                "the tool; the tool did not run"
            )
            self._refuse(session, name, arguments, message, MALFORMED_TOOL_CALL)
        names = ", ".join(f"`{name}`" for name, _ in written)
        raise ModelFailure(
            f"the model wrote a tool call to {names} as text instead of calling the tool "
            f"(reply: {content[:_SHOWN]}); the tool did not run. Check that the model's server "
            "parses its tool calls (llama.cpp: --jinja), or use a model that calls tools"
        )

    def _refuse_unparsable(self, session: Session, detail: str) -> None:
        """The model's server could not parse what the model wrote (a 5xx the gateway
        marks ``unparsable_output``): a failed tool call, the model's failure."""
        named = [tool for tool in self._implementations if tool in detail]
        name = named[0] if named else "unparsed"
        message = f"the model's server could not parse its tool call: {detail[:_SHOWN]}"
        self._refuse(session, name, {}, message, MALFORMED_TOOL_CALL)
        raise ModelFailure(
            f"the model wrote a tool call its server could not parse: {detail[:_SHOWN]}; "
            "not retried (the same request gets the same output). Use a model that writes "
            "its server's tool-call format, or check the server's chat template"
        )

    async def _complete(
        self, model: ModelHandle, session: Session, messages: list[dict[str, Any]]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self._tools:
            body["tools"] = self._tools
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.seed is not None:
            body["seed"] = self.settings.seed
        try:
            answer = await model(body)
        except ModelCallFailed as exc:
            if exc.error_type == _UNPARSABLE:
                self._refuse_unparsable(session, str(exc))
            raise AgentError(
                f"the model call through the gateway failed: {exc.status} {exc.error_type}: "
                f"{str(exc)[:_SHOWN]}"
            ) from exc
        try:
            message = answer["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise AgentError(
                f"the gateway answered something that is not a chat completion: "
                f"{str(answer)[:_SHOWN]}"
            ) from exc
        if not isinstance(message, dict):
            raise AgentError(f"the chat completion's message is not an object: {message!r}")
        return message

    async def _execute(self, session: Session, call: dict[str, Any]) -> str:
        """Run one tool call; what the model is told back (a failure included)."""
        function = call.get("function") or {}
        name = str(function.get("name") or "")
        raw = function.get("arguments") or "{}"
        result = await execute_tool_call(session, name, raw, self._implementations)
        if result.received is not None:
            # The tool received another call than the model sent (an injected fault took
            # a parameter out): the conversation shows the model the call the error is
            # about, so that resending it unchanged repeats the mistake.
            function["arguments"] = json.dumps(result.received, ensure_ascii=False)
        return result.content

    def _refuse(
        self,
        session: Session,
        name: str,
        arguments: dict[str, Any],
        message: str,
        error_type: str,
    ) -> str:
        """Record a call that reaches no tool as a failed span; the model is told why."""
        refuse_tool_call(session.recorder, name, arguments, message, error_type)
        return tool_error_content(error_type, message)

    async def aclose(self) -> None:
        """Nothing to release: the agent holds no connection (its calls are in process)."""
