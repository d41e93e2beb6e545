"""What a run was asked to do: its settings, typed and versioned, and the run defaults.

:class:`RunSettings` is written once when a run starts and read by attribute everywhere
(resume, rerun, workers, reports, the dashboard); the defaults come from
``seatrial._defaults``, light enough for the command's help.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from seatrial._defaults import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S, DEFAULT_WORKERS

SETTINGS_FORMAT_VERSION = 1
"""Version of :class:`RunSettings`' format. Settings stored before it carry none and load as
this version: every key they hold is a field of it or kept as an extra."""


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


class JudgeSetting(_NestedSetting):
    """The LLM judge a run had and its trust when the run started (``RunSettings.judge``);
    reports quote it, workers rebuild the judge from its model and prompt version."""

    model: str | None = None
    """The judge's model, a name under ``models:``."""
    prompt_version: str | None = None
    """The judge prompt's version (``judge.prompt_version``)."""
    prompt_hash: str | None = None
    """sha256 of that prompt's text."""
    calibrated: bool | None = None
    """True when its latest calibration met the bar: its FAIL verdicts count."""
    agreement: float | None = None
    """The latest calibration's agreement with people; None without one."""
    items: int | None = None
    """How many labelled items that calibration used."""
    reason: str | None = None
    """One line saying why its FAIL verdicts count or stay advisory."""


class GatewaySetting(_NestedSetting):
    """What workers rebuild a run's gateway from, for a run on workers with one
    (``RunSettings.gateway``)."""

    enabled: bool = True
    """The run's model calls go through a gateway (each worker runs its own proxy)."""
    config_hash: str | None = None
    """Hash of the coordinator's gateway configuration (``redis_url`` and the cassette left
    out): a worker whose own hashes otherwise says so in its log."""


class RunSnapshotAgent(_NestedSetting):
    """The agent a run used, as far as Seatrial can see it (``RunSnapshot.agent``)."""

    spec: str = ""
    """The spec the run was given (``python:...``, ``http://...``, a name)."""
    kind: str = ""
    """``python``, ``http`` or ``replay``."""
    file: str | None = None
    """A Python agent's module file."""
    code_hash: str | None = None
    """sha256 (first 16 hex digits) of that file when the run started."""
    version: str | None = None
    """A version the agent gave of itself, where a snapshot carries one; what tells two
    versions of an agent apart before ``code_hash``."""


class RunSnapshotGateway(_NestedSetting):
    """The gateway a run's model calls went through (``RunSnapshot.gateway``)."""

    config_hash: str = ""
    """sha256 (first 16 hex digits) of the gateway configuration, cassette section left out."""
    models: dict[str, str] = Field(default_factory=dict)
    """Configured model names and the pinned model id each sends upstream."""
    cassette_mode: Literal["off", "record", "replay"] = "off"
    """The cassette mode of the run."""
    cassette_path: str | None = None
    """The cassette folder (absolute) when the mode is not ``off``."""


class RunSnapshot(_NestedSetting):
    """What a whole run ran with, taken when it starts (``RunSettings.snapshot``).

    A key a snapshot lacks reads its default (empty, or None), so a run stored by an older
    Seatrial still loads; ``seatrial rerun`` says what it cannot compare.
    """

    seatrial_version: str = ""
    """Seatrial's version."""
    python_version: str = ""
    """The Python version, e.g. ``3.11.7``."""
    agent: RunSnapshotAgent = Field(default_factory=RunSnapshotAgent)
    """The agent under test."""
    gateway: RunSnapshotGateway | None = None
    """The run's gateway; None when the run had none."""


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
    snapshot: RunSnapshot | None = None
    """What the whole run ran with (versions, the agent, the gateway); None before snapshots."""
    judge: JudgeSetting | None = None
    """The LLM judge (model, prompt version and hash, its trust) when the run had one."""
    git: GitSetting | None = None
    """The branch and commit the run was made from (``branch``, ``commit``)."""
    dataset: DatasetSetting | None = None
    """The golden set the run drew cases from (its name and version)."""
    baseline: BaselineSetting | None = None
    """The baseline chosen when the run started (``ref``, ``run_id``)."""
    backend: str | None = None
    """``celery`` when the attempts ran on workers; None ran them in this machine."""
    gateway: GatewaySetting | None = None
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
