"""Suites and cases: what to send the agent, and what must hold of what it did."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seatrial.case._explain import INPUT_AND_TURNS, NO_INPUT, SIMULATED_WITH_INPUT
from seatrial.case._faults import ToolFault
from seatrial.case._gates import GateSpec, Priority
from seatrial.case._simulator import UserSimulator
from seatrial.i18n import gettext as _

CaseType = Literal["single_turn", "multi_turn", "tool_chain"]
Env = Literal["dev", "staging", "production"]
Source = Literal["manual", "replay", "ai_generated", "excel_import"]
PermissionScope = Literal["once", "session", "deny"]
Level = Literal["L1", "L2", "L3"]

SUITE_FORMAT_VERSION = 1


class AssertionSpec(BaseModel):
    """One assertion as written in a case: its type, common keys, and type parameters."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str
    """Registered assertion type (or alias), e.g. ``tool_called``, ``not-contains``."""
    id: str | None = None
    """Stable id for reports; defaults to the type (``TYPE#N`` when repeated)."""
    level: Level | None = None
    """L1, L2 or L3; defaults to the type's own level."""
    weight: float = Field(default=1.0, ge=0)
    """Weight in the soft score."""
    must_pass: bool | None = None
    """Hard constraint; defaults to true for L1/L2 and false for L3."""

    @property
    def params(self) -> dict[str, Any]:
        """The type-specific parameters (every key but the common ones)."""
        return dict(self.model_extra or {})


class Limits(BaseModel):
    """Upper bounds on one attempt; any one exceeded fails it with ``limit_exceeded``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_calls: int | None = Field(default=None, ge=0)
    """Most tool calls."""
    model_calls: int | None = Field(default=None, ge=0)
    """Most model calls."""
    wall_time_ms: float | None = Field(default=None, ge=0)
    """Longest wall time of the agent span, in milliseconds."""
    tokens: int | None = Field(default=None, ge=0)
    """Most input plus output tokens over all model calls."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Highest cost in US dollars."""


class Turn(BaseModel):
    """One user message of a multi-turn case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user"] = "user"
    """Always ``user``: the agent's replies are what is being tested."""
    content: str
    """What the user says."""


class Case(BaseModel):
    """One test case (see docs/cases.md for every field)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str = Field(min_length=1)
    """Unique within the suite."""
    name: str = ""
    """Human name."""
    description: str = ""
    """Free text: why the case exists (the incident it protects against)."""
    category: str = ""
    """Intent or area, e.g. ``预约``, ``read_only``; reports group by it."""
    priority: Priority = "P1"
    """P0 cases fail the run when they fail."""
    tags: list[str] = Field(default_factory=list)
    """Free labels."""
    type: CaseType | None = None
    """single_turn, multi_turn or tool_chain; derived from the turns when unset."""
    context: dict[str, Any] = Field(default_factory=dict)
    """Injected before the first turn (user profile, orders ...); ``context.user_id`` is the
    base user id."""
    input: str | None = None
    """The single user message (``task`` is accepted as an alias)."""
    turns: list[Turn] = Field(default_factory=list)
    """User messages for a multi-turn case (strings or ``{role: user, content}``)."""
    fixture: str | None = None
    """Folder copied fresh into a temporary workspace for every attempt."""
    allowed_tools: list[str] | None = None
    """Tools the agent may call; others are denied and recorded."""
    forbidden_events: list[str] = Field(default_factory=list)
    """Tool names or event kinds that must never occur."""
    permissions: dict[str, PermissionScope] = Field(default_factory=dict)
    """Write grants per tool: ``once``, ``session`` or ``deny``."""
    limits: Limits | None = None
    """Upper bounds on tool calls, model calls, wall time, tokens and cost."""
    expected_files: list[str] = Field(default_factory=list)
    """Workspace paths that must exist when the attempt ends."""
    assertions: list[AssertionSpec] = Field(default_factory=list)
    """What must hold of the attempt, in the order written."""
    threshold: float | None = Field(default=None, ge=0, le=1)
    """Lowest weighted score of the soft assertions; unset means every soft one must pass."""
    repeats: int = Field(default=1, ge=1)
    """How many times to run the case."""
    fresh_user: bool = True
    """Append a random suffix to the user id per attempt (memory isolation)."""
    env: Env = "dev"
    """dev, staging or production (production: read-only tools only)."""
    source: Source = "manual"
    """Where the case came from."""
    created_at: str | None = None
    """When it was written."""
    author: str | None = None
    """Who wrote it."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping (Excel columns, incident links)."""
    tool_faults: list[ToolFault] = Field(default_factory=list)
    """Faults put into tools' results at their Nth call (tool-contract tests)."""
    user_simulator: UserSimulator | None = None
    """A model that plays the user instead of written ``input``/``turns``."""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict) and "task" in data:
            data = dict(data)
            task = data.pop("task")
            data.setdefault("input", task)
        return data

    @field_validator("turns", mode="before")
    @classmethod
    def _turn_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"content": t} if isinstance(t, str) else t for t in value]
        return value

    @field_validator("created_at", mode="before")
    @classmethod
    def _date_text(cls, value: Any) -> Any:
        return None if value is None else str(value)

    @model_validator(mode="after")
    def _has_input(self) -> Case:
        if self.user_simulator is not None:
            if self.input is not None or self.turns:
                raise ValueError(_(SIMULATED_WITH_INPUT))
            return self
        if self.input is None and not self.turns:
            raise ValueError(_(NO_INPUT))
        if self.input is not None and self.turns:
            raise ValueError(_(INPUT_AND_TURNS))
        return self

    @property
    def user_turns(self) -> list[str]:
        """The user messages in order (a simulated user's opening only, when written)."""
        if self.user_simulator is not None:
            opening = self.user_simulator.opening
            return [opening] if opening is not None else []
        return [self.input] if self.input is not None else [t.content for t in self.turns]

    @property
    def kind(self) -> CaseType:
        """The case type, derived from the turns when not written."""
        if self.type is not None:
            return self.type
        return "multi_turn" if len(self.user_turns) > 1 else "single_turn"


class Gate(BaseModel):
    """The suite's release gate (the fuller gate language lives in ``seatrial.compare``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    """Lowest share of attempts that must pass."""


class Suite(BaseModel):
    """A named list of cases loaded from one file."""

    model_config = ConfigDict(frozen=True)

    format_version: int = SUITE_FORMAT_VERSION
    """Version of this record's format."""
    name: str
    """The suite's name."""
    path: str = ""
    """The file it came from."""
    cases: list[Case]
    """The cases, defaults applied."""
    rubrics: dict[str, str] = Field(default_factory=dict)
    """Success criteria per category, for the LLM judge."""
    gate: Gate = Field(default_factory=Gate)
    """Release gate."""
    agent: str | None = None
    """Default agent spec or name for this suite."""
    gates: list[GateSpec] = Field(default_factory=list)
    """Release gates written before the run (see docs/regression.md)."""
    probe: bool = False
    """A probe suite: run first in nightly use, its behaviour compared with the baseline's
    to catch a provider's silent model change (``seatrial drift``)."""
    dataset: str | None = None
    """A golden set whose cases run too: ``NAME`` (its newest version when the run starts)
    or ``NAME@VERSION``; the run records the version it ran."""

    def case(self, case_id: str) -> Case:
        """The case with this id."""
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)
