"""Which attempt a proxied call belongs to: per-attempt tokens in the base URL.

The runner registers each attempt before driving the agent and hands the agent a base URL
``http://host:port/a/{token}/v1``; calls through it land in that attempt's trace and carry its
run, case and attempt (for cost, cache, cassettes and faults). The token is random, so one
attempt cannot write into another's trace by guessing.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from seatrial.trace import TraceRecorder

ATTEMPT_HEADER = "x-seatrial-attempt"
"""Header naming the attempt token, for clients that cannot change their base URL path."""

ATTEMPT_ENDED = "seatrial: the attempt ended before the model answered"
"""The message a call is cancelled with when its attempt ends (its deadline, most often)."""


@dataclass(frozen=True)
class AttemptBinding:
    """One registered attempt."""

    token: str
    recorder: TraceRecorder
    run_id: str
    case_id: str
    attempt: int
    calls: set[asyncio.Task[Any]] = field(default_factory=set, compare=False)
    """The attempt's model calls in flight through the proxy (cancelled when it ends)."""


class AttemptRegistry:
    """Tokens of the attempts running now, safe to use from any thread."""

    def __init__(self) -> None:
        self._bindings: dict[str, AttemptBinding] = {}
        self._lock = threading.Lock()

    def register(
        self, recorder: TraceRecorder, run_id: str, case_id: str, attempt: int
    ) -> AttemptBinding:
        """Register an attempt; its token is the path segment of its base URL."""
        binding = AttemptBinding(secrets.token_hex(8), recorder, run_id, case_id, attempt)
        with self._lock:
            self._bindings[binding.token] = binding
        return binding

    def unregister(self, token: str) -> None:
        """Forget an attempt (its later calls are answered 404); calls still in flight are
        cancelled: their answers would belong to no attempt."""
        with self._lock:
            binding = self._bindings.pop(token, None)
        for task in list(binding.calls) if binding is not None else []:
            task.get_loop().call_soon_threadsafe(task.cancel, ATTEMPT_ENDED)

    async def end_calls(self, recorder: TraceRecorder) -> None:
        """Cancel the model calls in flight of the attempt recording into ``recorder`` and
        wait until they ended, so its trace holds no open ``chat`` span and its cassette
        no answer that came after the attempt (a timed-out agent leaves its calls behind)."""
        with self._lock:
            tasks = [
                task
                for binding in self._bindings.values()
                if binding.recorder is recorder
                for task in binding.calls
            ]
        for task in tasks:
            task.cancel(ATTEMPT_ENDED)
        if tasks:
            await asyncio.wait(tasks)

    def get(self, token: str) -> AttemptBinding | None:
        """The attempt behind a token, or None when it is unknown or finished."""
        with self._lock:
            return self._bindings.get(token)

    @contextmanager
    def attempt(
        self, recorder: TraceRecorder, run_id: str, case_id: str, attempt: int
    ) -> Iterator[AttemptBinding]:
        """Registered for the duration of a block."""
        binding = self.register(recorder, run_id, case_id, attempt)
        try:
            yield binding
        finally:
            self.unregister(binding.token)

    def __len__(self) -> int:
        with self._lock:
            return len(self._bindings)
