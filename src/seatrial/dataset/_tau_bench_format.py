"""The parts of a tau-bench results file the importer reads (unknown keys are ignored)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from seatrial.i18n import N_

EXPECTED = N_("a tau-bench results file: a JSON list of {task_id, trial, reward, info, traj}")


class Loose(BaseModel):
    """A record read from someone else's file: unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")


class Function(Loose):
    """What a tool call called."""

    name: str
    """The tool's name."""
    arguments: str | dict[str, Any] = "{}"
    """Its arguments, JSON text as the model wrote them."""


class ToolCall(Loose):
    """A tool call of an assistant message."""

    id: str | None = None
    """The call's id, which the tool message answers."""
    function: Function
    """What was called."""


class ChatMessage(Loose):
    """One message of the chat history."""

    role: str
    """system, user, assistant or tool."""
    content: str | None = None
    """The text."""
    tool_calls: list[ToolCall] | None = None
    """An assistant's tool calls."""
    tool_call_id: str | None = None
    """A tool message's call id."""


class Action(Loose):
    """An action a task expects."""

    name: str
    """The expected tool."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Its expected arguments."""


class Task(Loose):
    """The task as run."""

    user_id: str | None = None
    """The simulated user's id."""
    instruction: str = ""
    """What the simulated user was told to do."""
    actions: list[Action] = Field(default_factory=list)
    """The actions that produce the expected database."""
    outputs: list[str] = Field(default_factory=list)
    """Values the agent must say."""


class Info(Loose):
    """What tau-bench recorded beside the reward."""

    task: Task | None = None
    """The task as run."""
    reward_info: dict[str, Any] | None = None
    """How the reward was computed; None when the conversation never finished."""
    error: str | None = None
    """The exception, when tau-bench could not run the trial."""


class Record(Loose):
    """One trial of one task."""

    task_id: int | str | None = None
    """The task's index in tau-bench's task list."""
    trial: int | None = None
    """0-based trial number."""
    reward: float
    """1.0 when the trial succeeded."""
    info: Info = Field(default_factory=Info)
    """Task, reward breakdown or error."""
    traj: list[ChatMessage] = Field(default_factory=list)
    """The chat history."""


class ResultsFile(RootModel[list[Record]]):
    """A tau-bench results file: the list of trials."""
