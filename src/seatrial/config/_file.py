"""The keys ``seatrial.yaml`` may hold and :func:`load_config`, which reads and checks them all.

Each section is defined by the package that reads it (``judge:`` by :mod:`seatrial.judge`,
``models:`` and the gateway's parts by :mod:`seatrial.gateway`, ``gates:`` by
:mod:`seatrial.case`); this module only composes them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from seatrial.case import (
    SUITE_SUFFIXES,
    GateSpec,
    ModelAgentSettings,
    SimulatorSettings,
    explain,
    parse_yaml,
    read_text,
)
from seatrial.config._place import CONFIG_FILE, DASHBOARD_URL_ENV, find_config
from seatrial.config._schedule import ScheduleConfig
from seatrial.config._tier import TierConfig
from seatrial.dataset import MaskSettings
from seatrial.errors import ConfigError, Problem
from seatrial.gateway import GatewayConfig, GatewaySettings, ModelConfig
from seatrial.i18n import Language, language_of, unknown_language
from seatrial.i18n import gettext as _
from seatrial.judge import JudgeSettings
from seatrial.notify import AlertSettings
from seatrial.record import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S, DEFAULT_WORKERS

_NAME = re.compile(r"[A-Za-z0-9_.-]+")
"""What a tier's name may hold."""

_SECRET_KEYS = frozenset({"headers", "db", "mask", "url", "secret"})
"""Keys whose written values never appear in an error message (``mask:`` lists people's
names and addresses)."""


class AgentConfig(ModelAgentSettings):
    """A named agent: how to reach it, and what to send with every request; a ``model:``
    agent's prompt, tools and loop settings are the keys of
    :class:`seatrial.case.ModelAgentSettings`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(min_length=1)
    """The agent spec, as ``--agent`` takes it (``http://127.0.0.1:9000/chat``,
    ``python:package.module:function`` ...)."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """HTTP headers sent with every request. Write secrets as ``${NAME}``: the adapter reads
    the environment variable ``NAME`` when the run starts (a missing one stops it, exit 2)."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Seconds to wait for one reply; unset means ``run.timeout_s``."""
    retry: dict[str, Any] = Field(default_factory=dict)
    """When an http agent's turn is posted again after a transient answer (429, 502, 503,
    504, a refused connection): ``tries``, ``backoff_s``, ``max_wait_s``, ``on_status``
    (docs/agents.md, "Retries"); unset keeps the defaults, ``tries: 1`` never retries."""


class RunDefaults(BaseModel):
    """Defaults for ``seatrial run`` options; a command-line option wins over them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repeats: int | None = Field(default=None, ge=1)
    """Runs of every case, as ``--repeats``; unset keeps each case's own ``repeats``."""
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    """Attempts in flight at once."""
    workers: int = Field(default=DEFAULT_WORKERS, ge=1)
    """Processes sharing the attempts, as ``--workers`` (one per core for large runs)."""
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    """Seconds one attempt may take before it is recorded as ERROR (``timeout``)."""
    report_dir: str | None = None
    """Folder for report files, relative to the project folder; each run writes into its own
    ``RUN_ID/`` subfolder. Unset means ``.seatrial/reports/``."""


class ConfigFile(BaseModel):
    """The keys a ``seatrial.yaml`` may hold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project: str = ""
    """The project's name (one agent = one project); defaults to the project folder's name."""
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    """Named agents: name -> spec text, or a mapping with ``spec``, ``headers``,
    ``timeout_s``. ``--agent NAME`` picks one."""
    db: str | None = None
    """SQLAlchemy URL of the store; unset means ``.seatrial/seatrial.db`` in the project
    folder. ``SEATRIAL_DB_URL`` and ``--db`` win over it."""
    run: RunDefaults = Field(default_factory=RunDefaults)
    """Defaults for ``seatrial run``."""
    suites: list[str] = Field(default_factory=list)
    """Suite files or folders run when no suite is named, relative to the project folder."""
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    """Models the gateway may call, by name (the key is the model's ``name``)."""
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    """The model gateway: routing, budgets, cache, cassettes, faults, limits, tracing."""
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    """The LLM judge of L3 assertions and the calibration gate on its verdicts."""
    simulator: SimulatorSettings = Field(default_factory=SimulatorSettings)
    """Simulated users (a case's ``user_simulator``): the model of those that name none."""
    gates: list[GateSpec] = Field(default_factory=list)
    """Release gates for suites that state none (see docs/regression.md)."""
    mask: MaskSettings = Field(default_factory=MaskSettings)
    """What masking replaces before ingested data is stored: names, addresses, custom
    patterns, and which built-in kinds to find (see docs/masking.md)."""
    tiers: dict[str, TierConfig] = Field(default_factory=dict)
    """CI tiers by name, run with ``seatrial ci --tier NAME`` (see docs/ci.md)."""
    schedules: list[ScheduleConfig] = Field(default_factory=list)
    """Jobs ``seatrial serve`` starts on a cron schedule (see docs/monitoring.md)."""
    alerts: AlertSettings = Field(default_factory=AlertSettings)
    """Notifications to Feishu, DingTalk, WeCom, Slack or a webhook (see docs/monitoring.md)."""
    dashboard_url: str | None = None
    """The dashboard's address as readers reach it (``https://seatrial.example.com``), for
    links in PR comments and alerts; ``SEATRIAL_DASHBOARD_URL`` wins over it."""
    language: Language | None = None
    """The language Seatrial prints and writes in: ``en`` or ``zh`` (also ``zh-CN``,
    ``zh_CN``, ``zh-Hans``); ``--lang`` and ``SEATRIAL_LANG`` win over it; unset means the
    locale's (docs/i18n.md)."""

    @field_validator("language", mode="before")
    @classmethod
    def _language(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value  # not text: the type's own error says so
        language = language_of(value)
        if language is None:
            raise ValueError(unknown_language(value))  # the error names the key and line
        return language

    @field_validator("agents", mode="before")
    @classmethod
    def _spec_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: {"spec": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @field_validator("tiers")
    @classmethod
    def _tier_names(cls, value: dict[str, TierConfig]) -> dict[str, TierConfig]:
        # A tier's name becomes the tag `tier:NAME` and part of its gates' recorded source.
        bad = sorted(name for name in value if not _NAME.fullmatch(name))
        if bad:
            raise ValueError(
                _(
                    "tier name {name}: use letters, digits, `_`, `.` and `-` only "
                    "(e.g. `pr`, `nightly`, `release`)"
                ).format(name=repr(bad[0]))
            )
        return value

    @field_validator("models", mode="before")
    @classmethod
    def _model_names(cls, value: Any) -> Any:
        # The mapping key is the name; writing it twice would only invite a mismatch.
        if isinstance(value, dict):
            return {
                k: {"name": k, **v} if isinstance(v, dict) and "name" not in v else v
                for k, v in value.items()
            }
        return value

    @model_validator(mode="after")
    def _gateway_names_exist(self) -> ConfigFile:
        self.gateway_config()  # unknown model names in fallbacks or routing fail here
        names = [schedule.name for schedule in self.schedules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(
                _("schedules: {names} named twice; give each its own name").format(
                    names=", ".join(twice)
                )
            )
        unknown = sorted({s.tier for s in self.schedules if s.tier and s.tier not in self.tiers})
        if unknown:
            known = ", ".join(sorted(self.tiers)) or _("none")
            raise ValueError(
                _("schedules name tier {tiers}, not among tiers: (known: {known})").format(
                    tiers=", ".join(unknown), known=known
                )
            )
        for key, model in (
            ("judge.model", self.judge.model),
            ("simulator.model", self.simulator.model),
        ):
            if model is not None and model not in self.models:
                raise ValueError(
                    _(
                        "{key} {model} is not among models: (known: {known}); "
                        "add it under models: or name a configured model"
                    ).format(
                        key=key,
                        model=repr(model),
                        known=", ".join(sorted(self.models)) or _("none"),
                    )
                )
        return self

    def gateway_config(self) -> GatewayConfig:
        """``models:`` and ``gateway:`` as the gateway takes them."""
        return GatewayConfig(models=self.models, **dict(self.gateway))


class Config(ConfigFile):
    """The project configuration, with where it was found."""

    project_dir: Path
    """The project folder: the one holding ``seatrial.yaml``, else the starting folder."""
    file: Path | None = None
    """The ``seatrial.yaml`` read, or None when there is none."""

    def suite_paths(self) -> list[Path]:
        """``suites`` as absolute paths."""
        return [self.project_dir / path for path in self.suites]

    def suite_files(self, paths: list[str] | None = None) -> list[Path]:
        """``paths`` (default: ``suites``), relative to the project folder, as suite files: a
        folder stands for the suite files directly in it (not ``seatrial.yaml``, not hidden
        files), sorted by name.

        Raises:
            ConfigError: a path does not exist.
        """
        files: list[Path] = []
        for written in self.suites if paths is None else paths:
            path = self.project_dir / written
            if path.is_dir():
                files.extend(
                    sorted(
                        p
                        for p in path.iterdir()
                        if p.is_file()
                        and p.suffix.lower() in SUITE_SUFFIXES
                        and p.name != CONFIG_FILE
                        and not p.name.startswith(".")
                    )
                )
            elif path.exists():
                files.append(path)
            else:
                raise ConfigError(
                    _(
                        "{file}: suites: names {path}, which does not exist; "
                        "fix the path (relative to the project folder)"
                    ).format(file=self.file or CONFIG_FILE, path=path)
                )
        return files

    def report_path(self) -> Path | None:
        """``run.report_dir`` as an absolute path, or None."""
        return self.project_dir / self.run.report_dir if self.run.report_dir else None

    def dashboard_address(self) -> str | None:
        """The dashboard's address for links: ``SEATRIAL_DASHBOARD_URL``, else
        ``dashboard_url:``; None when neither is set."""
        return (os.environ.get(DASHBOARD_URL_ENV) or self.dashboard_url or "").rstrip("/") or None


def load_config(start: Path) -> Config:
    """Read the project configuration found from ``start`` (defaults when there is none).

    Raises:
        ConfigError: the file is invalid; the message names every problem, its line, and
            the fix.
    """
    file = find_config(start)
    if file is None:
        folder = start.resolve() if start.is_dir() else start.resolve().parent
        return Config(project=folder.name, project_dir=folder)
    shown = str(file)
    text, problems = read_text(file, shown)
    document = parse_yaml(text or "", shown)
    problems += document.problems
    data = {} if document.data is None else document.data
    if not problems and not isinstance(data, dict):
        problems.append(
            Problem(
                shown,
                document.locator.line(()),
                _("the file holds {kind}, not a mapping of settings").format(
                    kind=type(data).__name__
                ),
                _("write `key: value` lines, e.g. `project: my-agent`"),
            )
        )
    if problems:
        raise ConfigError(_report(problems))
    try:
        settings = ConfigFile.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            hide = bool(_SECRET_KEYS.intersection(str(part) for part in error["loc"]))
            said = explain(error, ConfigFile, noun="key", hide_value=hide)
            line = document.locator.line(said.loc)
            problems.append(Problem(shown, line, said.message, said.fix))
        raise ConfigError(_report(problems)) from exc
    fields = settings.model_dump(exclude_unset=True)
    fields["project"] = settings.project or file.parent.name
    return Config(**fields, project_dir=file.parent, file=file)


def _report(problems: list[Problem]) -> str:
    ordered = sorted(problems, key=lambda p: p.line or 0)
    lines = "\n".join(f"  {problem.said(_)}" for problem in ordered)
    return _("{file} is invalid:").format(file=CONFIG_FILE) + f"\n{lines}"
