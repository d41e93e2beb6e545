"""``user_simulator:`` of a case: a model that plays the user, in place of written turns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class UserSimulator(BaseModel):
    """Who the simulated user is, what they want, what they may say, and when they stop."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    persona: str = Field(min_length=1)
    """Who the user is and how they talk."""
    goal: str = Field(min_length=1)
    """What the user wants from the agent."""
    opening: str | None = None
    """The first message; unset lets the simulator write it."""
    facts: dict[str, str] = Field(default_factory=dict)
    """What the user knows and may reveal when asked (name -> value)."""
    hidden: dict[str, str] = Field(default_factory=dict)
    """What the user knows but must never reveal (a simulator that does broke its
    instructions)."""
    stop_when: str = "the goal is reached or cannot be reached"
    """When the user ends the conversation."""
    max_turns: int = Field(default=6, ge=1)
    """User messages at most."""
    model: str | None = None
    """The simulator's model (a name under ``models:``); unset: ``simulator.model`` of
    seatrial.yaml."""


class SimulatorSettings(BaseModel):
    """The ``simulator:`` section of seatrial.yaml: defaults for every simulated user."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    """The model (a name under ``models:``) of simulated users whose case names none."""
