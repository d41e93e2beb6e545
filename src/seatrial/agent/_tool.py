"""``@seatrial.tool``: an agent's own tool functions, recorded as ``execute_tool`` spans.

Decorate a tool once; every call made during an attempt is then recorded (name, call id,
arguments, result or error) and checked against the attempt's permission policy, with no
other code in the agent. Outside an attempt the function is simply called.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar, overload

from seatrial.agent._errors import ToolError
from seatrial.agent._policy import PermissionPolicy
from seatrial.trace import Span, TraceRecorder, encode_json, new_id
from seatrial.trace import attrs as A

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolInfo:
    """A registered tool function."""

    name: str
    function: Callable[..., Any]
    """The decorated (recording) function."""
    read_only: bool
    """Declared read-only: allowed in production and needs no write permission."""
    event_kind: str | None
    """``seatrial.event.kind`` put on its spans (e.g. ``network_request``)."""

    @property
    def is_async(self) -> bool:
        """Whether calling it returns a coroutine."""
        return inspect.iscoroutinefunction(self.function)


_registry: dict[str, ToolInfo] = {}


def registered_tool(name: str) -> ToolInfo | None:
    """The ``@seatrial.tool`` function registered under ``name``, if any."""
    return _registry.get(name)


class ToolCallSpan:
    """The open span of one tool call; set its result before the block ends."""

    def __init__(self, recorder: TraceRecorder, span: Span) -> None:
        self.recorder = recorder
        self.span = span

    def result(self, value: Any) -> None:
        """Record the call's result (as JSON)."""
        self.span.attributes[A.TOOL_RESULT] = encode_json(value)


def tool_span(
    recorder: TraceRecorder,
    name: str,
    arguments: dict[str, Any],
    *,
    event_kind: str | None = None,
) -> AbstractContextManager[ToolCallSpan]:
    """Record one ``execute_tool {name}`` span around a block.

    A :class:`ToolError` ends the span with its own ``error_type`` (``permission_denied``,
    ``FileNotFoundError`` ...); any other exception with the exception's type name.
    """
    attributes: dict[str, Any] = {
        A.OPERATION: A.OP_EXECUTE_TOOL,
        A.TOOL_NAME: name,
        A.TOOL_CALL_ID: f"call_{new_id()}",
        A.TOOL_ARGUMENTS: encode_json(arguments),
        A.TOOL_TYPE: "function",
    }
    if event_kind:
        attributes[A.EVENT_KIND] = event_kind
    return _ToolSpanBlock(recorder, recorder.span(f"execute_tool {name}", attributes))


class _ToolSpanBlock:
    """The block of :func:`tool_span`: a class, not a generator, because it is entered for
    every tool call of every attempt and a generator costs several times more."""

    __slots__ = ("_block", "_recorder", "_span")

    def __init__(self, recorder: TraceRecorder, block: AbstractContextManager[Span]) -> None:
        self._recorder, self._block = recorder, block

    def __enter__(self) -> ToolCallSpan:
        self._span = self._block.__enter__()
        return ToolCallSpan(self._recorder, self._span)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if isinstance(exc, ToolError):
            self._recorder.end_span(self._span, error=exc.error_type, message=str(exc))
        self._block.__exit__(kind, exc, tb)


def refuse_tool_call(
    recorder: TraceRecorder, name: str, arguments: Any, message: str, error_type: str
) -> ToolError:
    """Record a call that reaches no tool (unknown, malformed, async called sync) as a
    failed ``execute_tool`` span; the error, for the caller to raise or report."""
    error = ToolError(message, error_type)
    # The span records the failure when the error leaves it.
    with contextlib.suppress(ToolError), tool_span(recorder, name, arguments):
        raise error
    return error


_PLAIN = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def plain_names(signature: inspect.Signature) -> tuple[str, ...] | None:
    """The parameter names of a signature that takes each of them by name (no ``*args``,
    ``**kwargs`` or positional-only ones); None for any other signature."""
    parameters = signature.parameters
    if all(p.kind in _PLAIN for p in parameters.values()):
        return tuple(parameters)
    return None


def call_arguments(
    signature: inspect.Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    names: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """A call's arguments by name, defaults filled in, as a tool's span records them.

    ``names`` is :func:`plain_names` of the signature, when the caller worked it out once.
    """
    if names is None:
        names = plain_names(signature)
    if (
        names is not None
        and not args
        and len(kwargs) == len(names)
        and all(name in kwargs for name in names)
    ):
        # Every parameter passed by name (the usual tool call): bind() would give the same
        # names in the same order, for several times the cost, on every call of every attempt.
        return {name: kwargs[name] for name in names}
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        # The call itself will raise the real TypeError; record what was passed.
        return {"args": list(args), **kwargs}
    bound.apply_defaults()
    return dict(bound.arguments)


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *, name: str | None = None, read_only: bool = False, event_kind: str | None = None
) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    read_only: bool = False,
    event_kind: str | None = None,
) -> F | Callable[[F], F]:
    """Record calls of an agent's tool function (sync or async) as ``execute_tool`` spans.

    ``@seatrial.tool`` or ``@seatrial.tool(name=..., read_only=True, event_kind=...)``.
    Tools are write-class unless declared ``read_only``: production cases refuse them and
    ``case.permissions`` applies to them, as to the sandbox's write tools.
    """

    def decorate(function: F) -> F:
        tool_name = name or function.__name__
        signature = inspect.signature(function)
        names = plain_names(signature)

        def enter(recorder: TraceRecorder, arguments: dict[str, Any]) -> Any:
            return tool_span(recorder, tool_name, arguments, event_kind=event_kind)

        def authorize(recorder: TraceRecorder) -> None:
            policy = PermissionPolicy.current()
            if policy is not None:
                policy.authorize(recorder, tool_name, write=not read_only)

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                recorder = TraceRecorder.current()
                if recorder is None:
                    return await function(*args, **kwargs)
                with enter(recorder, call_arguments(signature, args, kwargs, names)) as call:
                    authorize(recorder)
                    result = await function(*args, **kwargs)
                    call.result(result)
                    return result

            wrapper: Callable[..., Any] = async_wrapper
        else:

            @functools.wraps(function)
            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                recorder = TraceRecorder.current()
                if recorder is None:
                    return function(*args, **kwargs)
                with enter(recorder, call_arguments(signature, args, kwargs, names)) as call:
                    authorize(recorder)
                    result = function(*args, **kwargs)
                    call.result(result)
                    return result

            wrapper = sync_wrapper
        _registry[tool_name] = ToolInfo(tool_name, wrapper, read_only, event_kind)
        return wrapper  # type: ignore[return-value]

    if fn is not None:
        return decorate(fn)
    return decorate
