"""The persisted records of a run: verdicts, metrics, attempts, runs.

Every record is a pydantic model whose format carries a version. This module imports only
:mod:`seatrial.trace`, :mod:`seatrial.i18n` (for how a verdict reads, ``verdict_word``) and the run
defaults (``seatrial._defaults``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from seatrial._defaults import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S, DEFAULT_WORKERS
from seatrial.record._settings import (
    SETTINGS_FORMAT_VERSION,
    BaselineSetting,
    BenchSetting,
    DatasetSetting,
    GatewaySetting,
    GitSetting,
    JudgeSetting,
    ReplayOfSetting,
    RunSettings,
    RunSnapshot,
    RunSnapshotAgent,
    RunSnapshotGateway,
    settings_key,
)
from seatrial.record._words import failure_type_word, verdict_word
from seatrial.trace import Trace, trusted_model

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_WORKERS",
    "FAILURE_TYPES",
    "RECORD_FORMAT_VERSION",
    "SETTINGS_FORMAT_VERSION",
    "SIMULATOR_FAILURE",
    "AssertionResult",
    "AssertionVerdict",
    "AttemptRecord",
    "AttemptSnapshot",
    "BaselineSetting",
    "BenchSetting",
    "CaseResult",
    "CassetteKey",
    "DatasetSetting",
    "GatewaySetting",
    "GitSetting",
    "JudgeSetting",
    "Level",
    "Metrics",
    "ReplayOfSetting",
    "RunInfo",
    "RunSettings",
    "RunSnapshot",
    "RunSnapshotAgent",
    "RunSnapshotGateway",
    "Summary",
    "Verdict",
    "failure_type_word",
    "settings_key",
    "verdict_word",
]

RECORD_FORMAT_VERSION = 1

"""Processes sharing a run's attempts when nothing says otherwise (``run.workers``)."""

Verdict = Literal["PASS", "FAIL", "WARNING", "ERROR"]
AssertionVerdict = Literal["pass", "fail", "not_evaluated"]
Level = Literal["L1", "L2", "L3"]

FAILURE_TYPES: tuple[str, ...] = (
    "tool_not_called",
    "wrong_tool",
    "wrong_params",
    "forbidden_action",
    "permission_violation",
    "limit_exceeded",
    "loop",
    "recovery",
    "side_effect_missing",
    "business_rule",
    "format",
    "hallucination",
    "semantic_mismatch",
    "safety",
    "malformed_tool_call",
    "agent_error",
    "timeout",
    "judge_error",
    "simulator",
)
"""The failure taxonomy: every failure is classed, for root-cause grouping and the dashboard.

Plugins may use other strings; these are the built-ins."""

SIMULATOR_FAILURE = "simulator"
"""The failure type of an ERROR attempt whose simulated user (``user_simulator``) broke its
instructions: the simulator's failure, not the agent's."""


class AssertionResult(BaseModel):
    """The outcome of one assertion on one attempt."""

    id: str
    """The assertion's id: the one written in the case, else ``TYPE`` or ``TYPE#N``."""
    level: Level
    """L1 (trace), L2 (rules) or L3 (semantic)."""
    type: str
    """Registered assertion type, e.g. ``tool_called``."""
    verdict: AssertionVerdict
    """pass, fail, or not_evaluated (never counted as passed)."""
    reason: str = ""
    """Why, in words a QA engineer can act on (in English: :attr:`message` rendered)."""
    failure_type: str | None = None
    """Taxonomy entry when the verdict is fail."""
    must_pass: bool = True
    """Hard constraint: a failure fails the attempt whatever the score."""
    weight: float = 1.0
    """Weight in the soft score."""
    score: float | None = None
    """0..1 for graded assertions; None means 1 for pass and 0 for fail."""
    message: dict[str, Any] | None = None
    """The reason as a message id and its parameters (``seatrial.i18n.Message``), so it reads
    in any language (``seatrial.i18n.render``); None for results stored before messages."""
    span_id: str | None = None
    """The span the result points at (the tool call that broke it), when there is one."""


class Metrics(BaseModel):
    """What one attempt cost, read off its trace."""

    tool_calls: int = 0
    """Number of ``execute_tool`` spans."""
    model_calls: int = 0
    """Number of model-call spans."""
    wall_time_ms: float = 0.0
    """The agent span's duration (without one, first start to last end)."""
    input_tokens: int = 0
    """Input tokens over all model calls."""
    output_tokens: int = 0
    """Output tokens over all model calls."""
    cost_usd: float = 0.0
    """Cost over all spans carrying ``seatrial.cost_usd``."""

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @classmethod
    def of(cls, trace: Trace) -> Metrics:
        """Compute the metrics of a trace."""
        input_tokens, output_tokens = trace.token_usage()
        # Every value below has its field's type already: skip validation (once per attempt).
        return trusted_model(
            cls,
            {
                "tool_calls": len(trace.tool_calls()),
                "model_calls": len(trace.model_calls()),
                "wall_time_ms": round(trace.wall_time_ms(), 3),
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cost_usd": float(trace.cost_usd()),
            },
        )


class CassetteKey(BaseModel):
    """Where the gateway recorded an attempt's model answers (its cassette entry)."""

    run_id: str
    """The run whose cassette file holds the answers (``<cassette folder>/<run_id>.jsonl``)."""
    case_id: str
    """The case of the recorded attempt."""
    attempt: int
    """The recorded attempt's number."""
    calls: int = 0
    """Model calls of this attempt recorded."""


class AttemptSnapshot(BaseModel):
    """What one attempt ran with, so that it can be re-run and a difference explained.

    Small on purpose (a few hundred bytes): the hashes are computed once per case per run,
    the models are read off the attempt's ``chat`` spans.
    """

    case_hash: str = ""
    """sha256 (first 16 hex digits) of the case definition as run."""
    fixture_hash: str | None = None
    """sha256 (first 16 hex digits) of the fixture folder (paths and bytes); None without one."""
    models_requested: list[str] = Field(default_factory=list)
    """Model names the agent asked for (``gen_ai.request.model``), sorted, once each."""
    models_answered: list[str] = Field(default_factory=list)
    """Model versions that answered (``gen_ai.response.model``), sorted, once each."""
    agent: dict[str, Any] | None = None
    """The agent's own description: ``session.describe(...)`` for Python agents, the
    protocol response's ``metadata`` for HTTP agents (``agent_version``, ``prompt_hash``,
    ``tool_schema_hash``, ``model`` ...); None when it gave none."""
    cassette: CassetteKey | None = None
    """The cassette entry of its model answers, when the gateway recorded them."""


class AttemptRecord(BaseModel):
    """One repeat of one case: what the agent did and the verdict on it."""

    format_version: int = RECORD_FORMAT_VERSION
    """Version of this record's format."""
    run_id: str
    """The run it belongs to."""
    case_id: str
    """The case it ran."""
    attempt: int
    """1-based repeat number."""
    verdict: Verdict
    """PASS, FAIL, WARNING or ERROR."""
    failure_type: str | None = None
    """The first failing hard assertion's type (L1 before L2, then as written)."""
    reason: str = ""
    """One line saying why the verdict is what it is (in English: :attr:`message` rendered)."""
    message: dict[str, Any] | None = None
    """The reason as a message id and its parameters (``seatrial.i18n.Message``); None for
    attempts stored before messages, and for reasons not yet said as one."""
    score: float | None = None
    """Weighted share of evaluated assertions that passed."""
    metrics: Metrics = Field(default_factory=Metrics)
    """Tool calls, model calls, wall time, tokens, cost."""
    assertions: list[AssertionResult] = Field(default_factory=list)
    """Every assertion's result, in evaluation order."""
    response: str = ""
    """The agent's final reply (last turn)."""
    responses: list[str] = Field(default_factory=list)
    """The agent's reply to every turn."""
    final_state: dict[str, Any] | None = None
    """External state the agent reported at the end, when it did."""
    error: str | None = None
    """What went wrong, for ERROR."""
    user_id: str = ""
    """The user id sent to the agent (with its fresh_user suffix)."""
    session_id: str = ""
    """The session id sent to the agent."""
    started_at: float = 0.0
    """Unix time the attempt started."""
    finished_at: float = 0.0
    """Unix time the attempt finished."""
    trace: Trace | None = None
    """The full trajectory."""
    snapshot: AttemptSnapshot | None = None
    """What the attempt ran with (``seatrial rerun`` re-runs it from this); None for
    attempts stored before Seatrial recorded snapshots."""


class CaseResult(BaseModel):
    """A case's verdict over its repeats."""

    case_id: str
    """The case."""
    name: str = ""
    """Its human name."""
    category: str = ""
    """Its category."""
    priority: str = "P1"
    """P0, P1 or P2."""
    verdict: Verdict
    """Majority over repeats (see docs/cases.md)."""
    pass_rate: float
    """Share of attempts that passed."""
    attempt_count: int = 0
    """Attempts stored (``len(attempts)`` when they are loaded)."""
    failure_type: str | None = None
    """The failure type of its first attempt that did not pass; None when every one passed
    (or that attempt had none)."""
    reason: str = ""
    """The reason of its first attempt that did not pass; empty when every one passed."""
    message: dict[str, Any] | None = None
    """That reason as a message (``seatrial.i18n.Message``), when it was stored as one."""
    attempts: list[AttemptRecord] = Field(default_factory=list)
    """Every attempt, in attempt order; empty when the report was built without them
    (``build_report(..., with_attempts=False)``: its files stream them from the store)."""


class Summary(BaseModel):
    """Counts over every attempt of a run."""

    cases: int = 0
    """Number of cases."""
    attempts: int = 0
    """Number of attempts."""
    passed: int = 0
    """Attempts with PASS."""
    failed: int = 0
    """Attempts with FAIL."""
    warnings: int = 0
    """Attempts with WARNING."""
    errors: int = 0
    """Attempts with ERROR."""
    pass_rate: float = 0.0
    """passed / attempts."""


class RunInfo(BaseModel):
    """A run's header: what ran, against what, when, with which settings."""

    format_version: int = RECORD_FORMAT_VERSION
    """Version of this record's format."""
    run_id: str
    """Unique id."""
    suite: str
    """Suite name."""
    suite_path: str = ""
    """Where the suite was loaded from."""
    agent: str
    """The agent spec."""
    tags: list[str] = Field(default_factory=list)
    """User tags (``--tag``)."""
    status: Literal["running", "finished", "interrupted"] = "running"
    """running until every attempt is stored."""
    started_at: float = 0.0
    """Unix time the run started."""
    finished_at: float | None = None
    """Unix time it finished."""
    settings: RunSettings = Field(default_factory=RunSettings)
    """What the run ran with (repeats, concurrency, timeout_s, gates ...)."""
    seatrial_version: str = ""
    """Seatrial's version."""
