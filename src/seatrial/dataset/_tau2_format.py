"""The parts of a tau2-bench results file the importer reads (unknown keys are ignored)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from seatrial.i18n import N_

EXPECTED = N_("a tau2 results file: a JSON object with `info`, `tasks` and `simulations`")


class Loose(BaseModel):
    """A record read from someone else's file: unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")


class ToolCall(Loose):
    """A tool call in a message."""

    id: str | None = None
    """The call's id, which the tool message repeats."""
    name: str
    """The tool."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """Its arguments."""
    requestor: str = "assistant"
    """Who called it: the agent (``assistant``) or the simulated user (``user``)."""


class Message(Loose):
    """One message of a simulation."""

    role: str
    """assistant, user or tool."""
    content: str | None = None
    """The text (a tool's result for a tool message)."""
    tool_calls: list[ToolCall] | None = None
    """Tool calls the message asked for."""
    id: str | None = None
    """For a tool message: the id of the call it answers."""
    requestor: str | None = None
    """For a tool message: who called the tool."""
    error: bool | None = None
    """For a tool message: the tool failed."""
    timestamp: str | None = None
    """When it was written (ISO 8601)."""
    usage: dict[str, Any] | None = None
    """Tokens of the model call that wrote it."""
    cost: float | None = None
    """What that model call cost, in US dollars."""


class Action(Loose):
    """An action a task expects."""

    action_id: str | None = None
    """``<task id>_<n>``."""
    requestor: str = "assistant"
    """Who must take it."""
    name: str
    """The tool."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Its expected arguments."""
    compare_args: list[str] | None = None
    """The arguments compared; None compares all."""


class ActionCheck(Loose):
    """Whether an expected action was taken."""

    action: Action
    """The expected action."""
    action_match: bool
    """It was taken with matching arguments."""


class Met(Loose):
    """A communicate check or an NL assertion and whether it held."""

    info: str | None = None
    """The value that had to be communicated (communicate checks)."""
    nl_assertion: str | None = None
    """The statement that had to hold (NL assertions)."""
    met: bool
    """Whether it held."""


class DbCheck(Loose):
    """The final-database check."""

    db_match: bool
    """The database equals the expected one."""


class RewardInfo(BaseModel):
    """How the reward was computed (unknown keys kept, for the trace)."""

    model_config = ConfigDict(extra="allow")

    reward: float
    """1.0 when the simulation succeeded."""
    db_check: DbCheck | None = None
    """The database check."""
    env_assertions: list[dict[str, Any]] | None = None
    """Assertions on the environment's state."""
    action_checks: list[ActionCheck] | None = None
    """Each expected action, matched or not."""
    communicate_checks: list[Met] | None = None
    """Values the agent had to say."""
    nl_assertions: list[Met] | None = None
    """Statements an LLM judged."""
    reward_basis: list[str] | None = None
    """The components that count: DB, ENV_ASSERTION, ACTION, COMMUNICATE, NL_ASSERTION."""
    reward_breakdown: dict[str, float] | None = None
    """Each counted component's score."""


class Simulation(Loose):
    """One trial of one task."""

    id: str | None = None
    """The simulation's id."""
    task_id: str | int | None = None
    """The task it ran."""
    trial: int | None = None
    """0-based trial number."""
    termination_reason: str | None = None
    """Why the conversation ended (``user_stop``, ``agent_stop``, ``max_steps`` ...)."""
    start_time: str | None = None
    """When it started (ISO 8601)."""
    end_time: str | None = None
    """When it ended."""
    reward_info: RewardInfo | None = None
    """The reward and its breakdown."""
    messages: list[Message] = Field(default_factory=list)
    """The conversation."""


class Description(Loose):
    """Why a task exists."""

    purpose: str | None = None
    """What it tests."""


class Scenario(Loose):
    """What the simulated user was told."""

    persona: str | None = None
    """Who the user is."""
    instructions: dict[str, Any] | str | None = None
    """Reason for the call, known and unknown information, task instructions."""


class Criteria(Loose):
    """How a task is scored."""

    actions: list[Action] | None = None
    """The expected actions."""
    nl_assertions: list[str] | None = None
    """Statements an LLM judges."""
    communicate_info: list[Any] | None = None
    """Values the agent must say."""
    reward_basis: list[str] | None = None
    """The components that count."""


class Task(Loose):
    """A task embedded in the file."""

    id: str | int
    """Its id."""
    description: Description | None = None
    """Its purpose."""
    user_scenario: Scenario | None = None
    """The simulated user's instructions."""
    evaluation_criteria: Criteria | None = None
    """How it is scored."""


class ResultsFile(Loose):
    """A tau2 results file."""

    timestamp: str | None = None
    """When the run was written."""
    info: dict[str, Any] = Field(default_factory=dict)
    """The run's settings: agent, user, environment, trials."""
    tasks: list[Task] = Field(default_factory=list)
    """The tasks run."""
    simulations: list[Simulation]
    """One per task and trial."""
