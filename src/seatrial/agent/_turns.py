"""The conversation loop every live adapter plugs into, and the one way a tool call is run.

An adapter answers one user message at a time (``answer(message, index)``: call the
function, POST the turn, run the model until it stops calling tools). :func:`converse` owns
everything around that answer, once for all adapters: it asks the attempt's user (the case's
written turns or a simulated user) for each message, numbers the turn, marks it in the trace
(the recorder's turn index and a ``seatrial.turn`` event on the attempt's span), runs the
answer under the attempt's permission policy, and hands the reply back to the user for the
next message. A tool call an agent's model asks for runs through :func:`execute_tool_call`,
which checks it and sends it to :meth:`Session.call_tool_async`, the one executor.

pluggy's ``_callers.py`` and Inspect's ``model/_call_tools.py`` are the model: implementations
answer, the loop owns turns, events and tool execution, so a rule about turns (or a fourth
adapter) is written once.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seatrial.agent._errors import ToolError
from seatrial.agent._tool import refuse_tool_call
from seatrial.trace import attrs as A

if TYPE_CHECKING:
    # Annotations only: the session imports the fault plan, which imports the adapters.
    from seatrial.agent._protocol import AttemptContext
    from seatrial.agent._session import Session

Answer = Callable[[str, int], Awaitable[str]]
"""An adapter's answer to one user message (the message, its 0-based turn index)."""

_SHOWN = 300


async def converse(
    ctx: AttemptContext, answer: Answer, session: Session | None = None
) -> list[str]:
    """Every turn of the attempt's conversation, answered by ``answer``; the replies in order.

    With a ``session`` (an in-process agent), its ``turn_index`` follows the turn and each
    answer runs under its permission policy, which ``@seatrial.tool`` functions consult.
    """
    replies: list[str] = []
    turns = ctx.user_turns()
    message = await turns.next(None)
    index = 0
    while message is not None:
        ctx.recorder.turn_index = index
        if session is not None:
            session.turn_index = index
        ctx.recorder.event(A.TURN, {A.TURN_INDEX: index, A.TURN_MESSAGE: message})
        if session is None:
            reply = await answer(message, index)
        else:
            with session.policy.activate():
                reply = await answer(message, index)
        replies.append(reply)
        message = await turns.next(reply)
        index += 1
    return replies


@dataclass(frozen=True)
class ToolCallResult:
    """What one tool call came to, as the model is told it."""

    content: str
    """The tool's result (text as is, anything else as JSON), or its error as JSON."""
    received: dict[str, Any] | None = None
    """The arguments the tool received where they differ from the call's (an injected
    fault took a parameter out): the conversation should show the model that call."""


def tool_error_content(error_type: str, message: str) -> str:
    """A failed tool call as the model is told it: ``{"error", "error_type"}`` as JSON."""
    return json.dumps({"error": message, "error_type": error_type}, ensure_ascii=False)


def _content(result: Any) -> str:
    """A tool's result as the ``tool`` message's text: text as is, anything else as JSON."""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)


def _refused(
    session: Session, name: str, arguments: Any, message: str, kind: str
) -> ToolCallResult:
    refuse_tool_call(session.recorder, name, arguments, message, kind)
    return ToolCallResult(tool_error_content(kind, message))


async def execute_tool_call(
    session: Session, name: str, raw_arguments: Any, tools: Collection[str]
) -> ToolCallResult:
    """Run the call of tool ``name`` with ``raw_arguments`` (JSON text or an object).

    A call that cannot reach a tool (arguments that are not a JSON object, a tool not among
    ``tools``, the ones the agent offered) is recorded as a failed ``execute_tool`` span; a
    tool that fails is recorded by its own span. Either way the model is told, as a real
    tool would tell it, and the conversation goes on.
    """
    try:
        arguments = json.loads(raw_arguments) if isinstance(raw_arguments, str) else raw_arguments
    except json.JSONDecodeError as exc:
        message = (
            f"the arguments of `{name}` are not valid JSON ({exc.msg}): {raw_arguments[:_SHOWN]}"
        )
        return _refused(session, name, {"arguments": raw_arguments}, message, "invalid_arguments")
    if not isinstance(arguments, dict):
        message = f"the arguments of `{name}` must be a JSON object, not {raw_arguments[:_SHOWN]}"
        return _refused(session, name, {"arguments": raw_arguments}, message, "invalid_arguments")
    if name not in tools:
        message = f"there is no tool `{name}`; the tools are: {', '.join(tools) or 'none'}"
        return _refused(session, name, arguments, message, "unknown_tool")
    try:
        result = await session.call_tool_async(name, **arguments)
    except ToolError as exc:
        return ToolCallResult(tool_error_content(exc.error_type, str(exc)), exc.arguments)
    except Exception as exc:  # the tool failed: the model is told, as a real tool would
        return ToolCallResult(
            tool_error_content(type(exc).__name__, f"{type(exc).__name__}: {exc}")
        )
    return ToolCallResult(_content(result))
