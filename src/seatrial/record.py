"""The persisted records of a run: verdicts, metrics, attempts, runs.

Every record is a pydantic model whose format carries a version. This module imports only
:mod:`seatrial.trace`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from seatrial.trace import Trace, trusted_model

RECORD_FORMAT_VERSION = 1

SETTINGS_FORMAT_VERSION = 1
"""Version of :class:`RunSettings`' format. Settings stored before it carry none and load as
this version: every key they hold is a field of it or kept as an extra."""

DEFAULT_CONCURRENCY = 8
"""Attempts in flight at once when nothing says otherwise (``run.concurrency``)."""
DEFAULT_TIMEOUT_S = 60.0
"""Seconds one attempt may take when nothing says otherwise (``run.timeout_s``)."""
DEFAULT_WORKERS = 1
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
    """Why, in words a QA engineer can act on."""
    failure_type: str | None = None
    """Taxonomy entry when the verdict is fail."""
    must_pass: bool = True
    """Hard constraint: a failure fails the attempt whatever the score."""
    weight: float = 1.0
    """Weight in the soft score."""
    score: float | None = None
    """0..1 for graded assertions; None means 1 for pass and 0 for fail."""


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


class RunSnapshotAgent(BaseModel):
    """The agent a run used, as far as Seatrial can see it."""

    spec: str
    """The spec the run was given (``python:...``, ``http://...``, a name)."""
    kind: str = ""
    """``python``, ``http`` or ``replay``."""
    file: str | None = None
    """A Python agent's module file."""
    code_hash: str | None = None
    """sha256 (first 16 hex digits) of that file when the run started."""


class RunSnapshotGateway(BaseModel):
    """The gateway a run's model calls went through."""

    config_hash: str
    """sha256 (first 16 hex digits) of the gateway configuration, cassette section left out."""
    models: dict[str, str] = Field(default_factory=dict)
    """Configured model names and the pinned model id each sends upstream."""
    cassette_mode: Literal["off", "record", "replay"] = "off"
    """The cassette mode of the run."""
    cassette_path: str | None = None
    """The cassette folder (absolute) when the mode is not ``off``."""


class RunSnapshot(BaseModel):
    """What a whole run ran with; stored as ``RunInfo.settings.snapshot`` when it starts."""

    seatrial_version: str
    """Seatrial's version."""
    python_version: str
    """The Python version, e.g. ``3.11.7``."""
    agent: RunSnapshotAgent
    """The agent under test."""
    gateway: RunSnapshotGateway | None = None
    """The run's gateway; None when the run had none."""


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
    """One line saying why the verdict is what it is."""
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
    attempts: list[AttemptRecord] = Field(default_factory=list)
    """Every attempt."""


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


class _NestedSetting(BaseModel):
    """A nested part of :class:`RunSettings`: frozen, unknown keys kept as extras, and only
    the keys a run set stored again, so a stored run's settings round-trip unchanged."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @model_serializer(mode="wrap")
    def _only_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys the run set (and extras)."""
        dumped: dict[str, Any] = handler(self)
        kept = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in dumped.items() if key in kept}


class GitSetting(_NestedSetting):
    """The branch and commit a run was made from (``RunSettings.git``)."""

    branch: str | None = None
    """The branch checked out (or named by CI); None when detached and unnamed."""
    commit: str | None = None
    """The commit's full sha."""


class DatasetSetting(_NestedSetting):
    """The golden set a run drew cases from (``RunSettings.dataset``)."""

    name: str | None = None
    """The golden set's name."""
    version: int | None = None
    """The version of the set that ran."""
    hash: str | None = None
    """The content hash of that version when the run started."""
    verified: bool | None = None
    """False when the set's history failed verification as the run started."""


class BaselineSetting(_NestedSetting):
    """The baseline chosen when a run started (``RunSettings.baseline``)."""

    ref: str | None = None
    """The reference as given (``latest``, ``latest-passing``, a run id or a tag)."""
    run_id: str | None = None
    """The run it resolved to; None when none was stored yet."""


class BenchSetting(_NestedSetting):
    """The benchmark a run belongs to (``RunSettings.bench``, ``seatrial bench``)."""

    id: str | None = None
    """The benchmark's id."""
    agents: list[str] | None = None
    """Every agent of the benchmark, in the order given."""
    agent: str | None = None
    """This run's agent, as named in the benchmark."""
    position: int | None = None
    """This run's agent's place in ``agents`` (from 0)."""


class ReplayOfSetting(_NestedSetting):
    """The stored attempt a ``seatrial rerun`` replayed (``RunSettings.replay_of``)."""

    run_id: str | None = None
    """The run of the replayed attempt."""
    case_id: str | None = None
    """Its case."""
    attempt: int | None = None
    """Its number."""


class RunSettings(BaseModel):
    """What a run ran with, written once when it starts (``RunInfo.settings``).

    Resume, rerun, workers, reports and the dashboard read these attributes; nothing else
    reads a stored run's settings by key. Keys this version does not know (written by an
    older or newer Seatrial, or by a plugin) are kept as extras and stored again unchanged.
    Only the keys a run set are stored: a default is never written for a run that did not
    choose it.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    format_version: int = SETTINGS_FORMAT_VERSION
    """Version of this record's format; always stored."""
    repeats: int | None = None
    """Runs of every case (``--repeats``); None kept each case's own ``repeats``."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Attempts in flight at once."""
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    """Wall-clock limit per attempt; None is no limit."""
    workers: int = DEFAULT_WORKERS
    """Processes that shared the attempts."""
    gate: dict[str, Any] = Field(default_factory=dict)
    """The suite's ``gate:`` (``min_pass_rate``)."""
    gates: list[dict[str, Any]] = Field(default_factory=list)
    """The quality gates the run is held to, as written (``GateSpec`` dumps)."""
    gates_hash: str | None = None
    """sha256 of the gates, to tell when they changed since the run."""
    gates_source: str | None = None
    """Where the gates came from: ``file:PATH``, ``suite:PATH`` or ``config:PATH``."""
    rubrics: dict[str, Any] = Field(default_factory=dict)
    """The suite's L3 rubrics, by name."""
    suite_hash: str = ""
    """sha256 of the cases as run."""
    probe: bool = False
    """The suite is a drift probe (``seatrial drift``)."""
    snapshot: dict[str, Any] | None = None
    """What the whole run ran with (a :class:`RunSnapshot` dump); None before snapshots."""
    judge: dict[str, Any] | None = None
    """The LLM judge's record (model, prompt version ...) when the run had one."""
    git: GitSetting | None = None
    """The branch and commit the run was made from (``branch``, ``commit``)."""
    dataset: DatasetSetting | None = None
    """The golden set the run drew cases from (its name and version)."""
    baseline: BaselineSetting | None = None
    """The baseline chosen when the run started (``ref``, ``run_id``)."""
    backend: str | None = None
    """``celery`` when the attempts ran on workers; None ran them in this machine."""
    gateway: dict[str, Any] | None = None
    """What workers rebuild the run's gateway from, for a run on workers with one."""
    bench: BenchSetting | None = None
    """The benchmark the run belongs to (``seatrial bench``)."""
    replay_of: ReplayOfSetting | None = None
    """The attempt a ``seatrial rerun`` replayed (``run_id``, ``case_id``, ``attempt``)."""
    mode: str | None = None
    """How a rerun replayed its attempt (its cassette mode)."""
    imported_from: str | None = None
    """The file an imported run was read from."""
    format: str | None = None
    """The format an imported run was read in (``tau2``, ``tau_bench`` ...)."""
    sha256: str | None = None
    """sha256 of the imported file."""
    warnings: list[str] = Field(default_factory=list)
    """What the import noticed and skipped."""
    times: str | None = None
    """``synthesised`` when an imported run's times were made up (no durations then)."""

    @model_serializer(mode="wrap")
    def _only_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys the run set (and extras), so an old run's settings round-trip."""
        dumped: dict[str, Any] = handler(self)
        kept = self.model_fields_set | set(self.model_extra or {}) | {"format_version"}
        return {key: value for key, value in dumped.items() if key in kept}

    def stored(self) -> dict[str, Any]:
        """The settings as stored: the keys the run set and the extras, JSON-ready."""
        return self.model_dump(mode="json")

    def with_values(self, **values: Any) -> RunSettings:
        """A copy with ``values`` set (validated), as if the run had set them."""
        return RunSettings.model_validate({**self.stored(), **values})


def settings_key(name: str) -> str:
    """The stored key of the :class:`RunSettings` field ``name``, for a query that reads the
    store's ``settings`` column in SQL; a name that is no field raises ``KeyError`` at once."""
    if name not in RunSettings.model_fields:
        raise KeyError(f"RunSettings has no field {name!r}")
    return name


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
