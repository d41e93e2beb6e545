"""``python:module:function`` and ``python:path/to/file.py:function``: an agent in-process.

The function is called once per user turn as ``fn(message, session)`` and returns the reply
(a string) or ``{"response": ..., "final_state": {...}}``. Sync functions run in a worker
thread so that many attempts can be in flight; async functions are awaited.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from seatrial.agent._protocol import AgentOutput, AttemptContext
from seatrial.agent._session import Session
from seatrial.agent._turns import converse
from seatrial.errors import AgentError, AgentSpecError
from seatrial.i18n import gettext as _
from seatrial.record import DEFAULT_CONCURRENCY

PREFIX = "python:"


def _on_path(folder: Path) -> None:
    # Agents import their sibling modules; make their folder importable as a script would.
    entry = str(folder)
    if entry not in sys.path:
        sys.path.insert(0, entry)


def _describe(exc: BaseException) -> str:
    """``Type: message (at file:line in function)`` for an exception raised by the agent."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        text += f" (at {last.filename}:{last.lineno} in {last.name})"
    return text


class PythonAgent:
    """Drives an agent written as a Python function, in this process."""

    def __init__(
        self,
        spec: str,
        *,
        base_dir: Path | None = None,
        name: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        target = spec.removeprefix(PREFIX)
        location, _colon, function = target.rpartition(":")
        if not location or not function:
            raise AgentSpecError(
                _(
                    "`{spec}` is not a python agent spec; write python:module:function "
                    "or python:path/to/file.py:function"
                ).format(spec=spec)
            )
        self.spec = spec
        self.name = name or function
        self._location = location
        self._function_name = function
        self._base_dir = (base_dir or Path.cwd()).resolve()
        self._function: Callable[..., Any] | None = None
        self._call_async = False
        # asyncio's default pool has min(32, cores + 4) threads: a sync agent would run far
        # fewer turns at once than --concurrency asks for. The pool is sized to the run.
        self._concurrency = max(1, concurrency)
        self._pool: ThreadPoolExecutor | None = None

    @property
    def _is_file(self) -> bool:
        return self._location.endswith(".py") or "/" in self._location or "\\" in self._location

    def _load_module(self) -> Any:
        if not self._is_file:
            _on_path(self._base_dir)
            try:
                return importlib.import_module(self._location)
            except Exception as exc:
                raise AgentSpecError(
                    _(
                        "cannot import module `{module}` for agent `{spec}`: {error}; run from "
                        "the project folder, install the module, or use "
                        "python:path/to/file.py:function"
                    ).format(module=self._location, spec=self.spec, error=_describe(exc))
                ) from exc
        path = Path(self._location)
        path = (path if path.is_absolute() else self._base_dir / path).resolve()
        if not path.is_file():
            raise AgentSpecError(
                _(
                    "agent file not found: {path} (from `{spec}`); fix the path, which is "
                    "relative to {folder}"
                ).format(path=path, spec=self.spec, folder=self._base_dir)
            )
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
        module_name = f"seatrial_agent_{path.stem}_{digest}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise AgentSpecError(
                _("cannot load {path} as Python; give a .py file").format(path=path)
            )
        module = importlib.util.module_from_spec(module_spec)
        _on_path(path.parent)
        sys.modules[module_name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise AgentSpecError(
                _("loading {path} failed: {error}; fix the error and run again").format(
                    path=path, error=_describe(exc)
                )
            ) from exc
        return module

    def _load(self) -> Callable[..., Any]:
        if self._function is not None:
            return self._function
        module = self._load_module()
        function: Callable[..., Any] | None = getattr(module, self._function_name, None)
        if function is None or not callable(function):
            found = sorted(
                n
                for n, v in vars(module).items()
                if inspect.isfunction(v) and not n.startswith("_")
            )
            said = (
                _("`{function}` is not callable in {module}; functions there: {found}")
                if function is not None
                else _("`{function}` is not defined in {module}; functions there: {found}")
            )
            raise AgentSpecError(
                said.format(
                    function=self._function_name,
                    module=self._location,
                    found=", ".join(found) or _("none"),
                )
            )
        # An async callable object is not a coroutine function: it runs in a thread and its
        # coroutine is awaited in run(), which costs a thread hop and nothing else. Asked
        # once here rather than for every attempt.
        self._call_async = inspect.iscoroutinefunction(function)
        self._function = function
        return function

    async def check(self) -> None:
        """Import the module and find the function."""
        self._load()

    def source_file(self) -> Path | None:
        """The file of the agent's module (imported if need be); None when it has none.

        Runs record its hash in their snapshot, so a replay can say the agent changed.
        """
        file = getattr(self._load_module(), "__file__", None)
        return Path(file).resolve() if file else None

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """Call the function once per user turn with the same :class:`Session`."""
        function = self._load()
        call_async = self._call_async
        session = Session(ctx)

        async def answer(message: str, index: int) -> str:
            try:
                if call_async:
                    result = await function(message, session)
                else:
                    result = await self._in_thread(function, message, session)
                if type(result) is not str and inspect.isawaitable(result):
                    result = await result
            except AgentError:
                raise
            except Exception as exc:
                raise AgentError(f"the agent raised {_describe(exc)}") from exc
            return self._reply(result, session)

        responses = await converse(ctx, answer, session)
        return AgentOutput(responses=responses, final_state=session.final_state)

    async def _in_thread(self, function: Callable[..., Any], *args: Any) -> Any:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._concurrency, thread_name_prefix="seatrial-agent")
        # The copied context carries the attempt's recorder and open span into the thread.
        call = functools.partial(contextvars.copy_context().run, function, *args)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    def _reply(self, result: Any, session: Session) -> str:
        if isinstance(result, str):
            return result
        if isinstance(result, dict) and isinstance(result.get("response"), str):
            final_state = result.get("final_state")
            if final_state is not None:
                if not isinstance(final_state, dict):
                    raise AgentError(
                        f"`{self._function_name}` returned a final_state that is not a dict "
                        f"({type(final_state).__name__}); return a dict"
                    )
                session.final_state = final_state
            return str(result["response"])
        shown = repr(result)[:200]
        raise AgentError(
            f"`{self._function_name}` returned {shown}; return the reply as a str, or a dict "
            "with `response` (and optionally `final_state`)"
        )

    async def aclose(self) -> None:
        """Release the worker threads of sync agents (a later run starts new ones)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
