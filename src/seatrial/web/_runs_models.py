"""The JSON the runs list and trend routes return (their OpenAPI schemas)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RunRow(BaseModel):
    """One run in the runs list, with figures summed over its attempts."""

    run_id: str
    """The run's id."""
    suite: str
    """The suite's name."""
    agent: str
    """The agent spec."""
    tags: list[str] = Field(default_factory=list)
    """The run's tags."""
    status: str
    """running, finished or interrupted."""
    started_at: float
    """Unix time the run started."""
    finished_at: float | None = None
    """Unix time it finished; None while running."""
    attempts: int
    """Attempts stored."""
    passed: int
    """Attempts whose verdict is PASS."""
    pass_rate: float
    """passed / attempts (0 without attempts)."""
    pass_rate_low: float
    """Low end of the pass rate's Wilson 95% interval."""
    pass_rate_high: float
    """High end of the pass rate's Wilson 95% interval."""
    gate_met: bool
    """Whether every gate the run stored (and the built-in ones) is met."""
    cost_usd: float
    """Sum of the attempts' cost."""


class RunsPage(BaseModel):
    """A page of the filtered runs list, newest first."""

    page: int
    """This page, from 1."""
    page_size: int
    """Runs per page."""
    has_next: bool
    """Whether a further page exists."""
    runs: list[RunRow]
    """The runs of this page."""


class TrendPoint(BaseModel):
    """One run's figures in the trend chart."""

    run_id: str
    """The run's id."""
    started_at: float
    """Unix time the run started."""
    attempts: int
    """Attempts stored."""
    pass_rate: float | None
    """Share of attempts that passed; None without attempts."""
    p95_ms: float | None
    """95th percentile of the attempts' wall time (linear, as numpy); None without attempts."""
    tokens: int
    """Input plus output tokens over the attempts."""
    cost_usd: float
    """Cost over the attempts."""


class Trends(BaseModel):
    """The trend of the newest filtered runs (at most 200), oldest first."""

    runs: list[TrendPoint]
    """One point per run."""
