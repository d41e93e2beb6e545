"""Seatrial's errors, one tree rooted at :class:`SeatrialError`.

::

    SeatrialError                 exit code 3 unless a subclass says otherwise
    ├── InputError                exit code 2: the user's files or flags are wrong
    │   ├── SuiteError            a suite or case file is invalid (carries every problem)
    │   ├── ConfigError           seatrial.yaml or a command-line option is invalid
    │   ├── AgentSpecError        an --agent spec names nothing that can be loaded
    │   └── RunNotFound           no stored run has the id (or prefix) given
    ├── AgentError                the agent under test failed (recorded as ERROR, not raised
    │   │                         out of a run)
    │   └── ModelFailure          the model under test broke the tool-call protocol
    │                             (recorded as FAIL: the model's failure, not a crash)
    ├── StoreError                the store could not be opened, migrated or written
    └── GatewayError              a model call through the gateway failed
        ├── ProviderError         one provider call failed (kind, status, retryable)
        ├── FallbackExhausted     every model of a fallback chain failed (names each try)
        ├── BudgetExceeded        a run or project budget is spent; no new calls
        ├── RateLimitTimeout      the rate limit would make the call wait too long
        ├── CassetteMismatch      a replayed request differs from the recorded one
        └── ModelCallFailed       an attempt's in-process model call failed (the status and
                                  error type the proxy would have answered)

A failing agent is data: the runner turns :class:`AgentError` into an ERROR verdict with its
reason, and :class:`ModelFailure` into a FAIL. Every message says what to do next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class SeatrialError(Exception):
    """Base of every error Seatrial raises on purpose."""

    exit_code = 3


class InputError(SeatrialError):
    """The user's input (files, flags, configuration) is wrong; nothing was run."""

    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file, with where it is and how to fix it."""

    path: str
    line: int | None
    message: str
    fix: str = ""

    def __str__(self) -> str:
        return self.said()

    def said(self, _: Callable[[str], str] = str) -> str:
        """The problem in one line, ``PATH:LINE: MESSAGE (fix: FIX)``, its framing read through
        ``_`` (``seatrial.i18n.gettext`` for the reader's language; English without it). The
        message and fix are in the language they were built in.

        The translation is passed in: ``seatrial.i18n`` imports this module.
        """
        where = f"{self.path}:{self.line}" if self.line else self.path
        text = _("{where}: {message}").format(where=where, message=self.message)
        return _("{problem} (fix: {fix})").format(problem=text, fix=self.fix) if self.fix else text


class SuiteError(InputError):
    """A suite or case file is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class ConfigError(InputError):
    """A configuration file or command-line option is invalid."""


class AgentSpecError(InputError):
    """An ``--agent`` spec cannot be resolved to an agent."""


class RunNotFound(InputError):
    """No run in the store has the given id, unique prefix, or ``latest``."""


class AgentError(SeatrialError):
    """The agent under test failed: raised, HTTP 5xx, malformed answer, unreachable.

    ``failure_type`` is ``agent_error`` or ``timeout``.
    """

    def __init__(self, message: str, failure_type: str = "agent_error") -> None:
        self.failure_type = failure_type
        super().__init__(message)


class ModelFailure(AgentError):
    """The model under test broke the tool-call protocol: it wrote a tool call as text, or
    wrote one its server could not parse (``failure_type`` ``malformed_tool_call``).

    The harness and the agent's loop worked; the model did not: the attempt is FAIL (the
    assertions are not run: the turn had no answer to judge), never ERROR.
    """

    def __init__(self, message: str, failure_type: str = "malformed_tool_call") -> None:
        super().__init__(message, failure_type)


class StoreError(SeatrialError):
    """The store could not be opened, migrated or written."""


class GatewayError(SeatrialError):
    """A model call through the gateway failed. Messages never contain an API key."""


class ProviderError(GatewayError):
    """One call to one provider failed.

    ``kind`` is ``timeout``, ``rate_limited``, ``server_error``, ``bad_request``,
    ``connection``, ``malformed`` or ``unparsable_output`` (a 5xx saying the server could not
    parse the model's own output); 429, other 5xx, timeouts and connection errors are
    retryable.
    """

    def __init__(
        self, message: str, kind: str, status: int | None = None, retryable: bool = False
    ) -> None:
        self.kind = kind
        self.status = status
        self.retryable = retryable
        super().__init__(message)


class FallbackExhausted(GatewayError):
    """Every model of a chain failed; ``attempts`` lists each try (model, outcome, detail)."""

    def __init__(self, message: str, attempts: list[object]) -> None:
        self.attempts = attempts
        super().__init__(message)


class BudgetExceeded(GatewayError):
    """A run or project budget is spent: new model calls are refused."""


class RateLimitTimeout(GatewayError):
    """Waiting for the rate limit would take longer than the gateway may wait."""


class CassetteMismatch(GatewayError):
    """In strict replay, a request differs from the recorded one (the first difference named)."""


class ModelCallFailed(GatewayError):
    """An attempt's in-process model call (``AttemptContext.model``) failed.

    It carries what the gateway's proxy would have answered an agent calling it over HTTP:
    ``status`` (e.g. 502) and OpenAI's error ``error_type`` (``unparsable_output``,
    ``budget_exceeded``, ``attempt_ended`` ...), so a ``model:`` agent tells the model's own
    failures from the gateway's without importing it.
    """

    def __init__(self, message: str, *, status: int, error_type: str) -> None:
        self.status = status
        self.error_type = error_type
        super().__init__(message)
