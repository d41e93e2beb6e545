"""``tiers:`` of seatrial.yaml: what ``seatrial ci --tier NAME`` runs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from seatrial.case import GateSpec


class TierConfig(BaseModel):
    """One CI tier (``pr``, ``nightly``, ``release`` ...): what ``seatrial ci --tier NAME`` runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suites: list[str] = Field(default_factory=list)
    """Suite files or folders, relative to the project folder; empty means top-level
    ``suites:``."""
    datasets: list[str] = Field(default_factory=list)
    """Golden sets run as well, each as a run of its own, ``NAME`` or ``NAME@VERSION`` (a
    release tier's golden set)."""
    agent: str | None = None
    """The agent, a name from ``agents:`` or a spec; ``--agent`` wins over it."""
    repeats: int | None = Field(default=None, ge=1)
    """Runs of every case; unset takes ``run.repeats``, else each case's own ``repeats``."""
    gates: list[GateSpec] | str | None = None
    """The tier's release gates: a list written here, or a gates file (relative to the
    project folder); they replace the suites' own and the top-level ``gates:``; unset keeps
    those."""
