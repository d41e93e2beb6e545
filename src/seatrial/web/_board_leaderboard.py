"""The leaderboard: one suite, one row per agent (its newest finished run), ranked by success.

Read through the store's queries over the chosen runs only: their attempts' verdicts and
figures (a few hundred rows per run) and, for tool success, a count of their ``execute_tool``
spans.
"""

from __future__ import annotations

import math
from collections import defaultdict

from pydantic import BaseModel, Field

from seatrial.compare import REPLAY_TAG, latency_summary, mean_pass_hat_k, wilson_interval
from seatrial.store import (
    AgentRun,
    AttemptFigures,
    Store,
    ToolCounts,
    attempt_figures,
    newest_run_per_agent,
    tool_call_counts,
)


class LeaderboardEntry(BaseModel):
    """One agent's figures on the suite, from its newest finished run."""

    rank: int
    """1 for the agent with the highest success."""
    agent: str
    """The agent spec the run used (``runs.agent``)."""
    run_id: str
    """The run the figures come from."""
    started_at: float
    """When that run started (Unix seconds)."""
    cases: int
    """Cases with at least one stored attempt."""
    attempts: int
    """Attempts stored (cases x repeats)."""
    passes: int
    """Attempts whose verdict is PASS."""
    success: dict[str, float]
    """Attempt pass rate with its Wilson 95% interval: estimate, low, high, confidence."""
    k: int
    """The most repeats any case has; pass^k is given for this k when above 1."""
    pass_hat_k: float | None
    """Chance that all k repeats of a case pass (tau-bench's pass^k, mean over cases)."""
    latency_p50_ms: float | None
    """Median attempt wall time in milliseconds (None for imported runs without times)."""
    latency_p95_ms: float | None
    """95th percentile of attempt wall time in milliseconds."""
    mean_tokens: float
    """Input plus output tokens per attempt, on average."""
    mean_cost_usd: float
    """Cost in US dollars per attempt, on average."""
    tool_calls: int
    """``execute_tool`` spans of the run."""
    tool_errors: int
    """Of them, those that ended in an error (status ``error``: an exception, a denial)."""
    tool_success: float | None
    """Share of tool calls without an error; None when no tool was called."""


class Leaderboard(BaseModel):
    """The leaderboard of one suite."""

    suite: str | None
    """The suite ranked (None when the store holds no run)."""
    suites: list[str] = Field(default_factory=list)
    """Every suite with a stored run."""
    entries: list[LeaderboardEntry] = Field(default_factory=list)
    """One per agent, best first."""


_NO_TOOLS = ToolCounts(calls=0, errors=0)


def _entry(run: AgentRun, rows: list[AttemptFigures], tools: ToolCounts) -> LeaderboardEntry:
    per_case: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        per_case[row.case_id].append(row.verdict == "PASS")
    counts = [(len(v), sum(v)) for v in per_case.values()]
    passes = sum(c for _, c in counts)
    k = max((n for n, _ in counts), default=0)
    timed = run.settings.get("times") != "synthesised"
    latency = latency_summary([float(r.wall_time_ms) for r in rows]) if timed else None
    calls, errors = tools
    n = len(rows)
    return LeaderboardEntry(
        rank=0,
        agent=run.agent,
        run_id=run.run_id,
        started_at=run.started_at,
        cases=len(per_case),
        attempts=n,
        passes=passes,
        success=wilson_interval(passes, n).as_dict(),
        k=k,
        pass_hat_k=mean_pass_hat_k(counts, k) if k > 1 else None,
        latency_p50_ms=None if latency is None else latency.p50,
        latency_p95_ms=None if latency is None else latency.p95,
        mean_tokens=math.fsum(float(r.tokens) for r in rows) / n if n else 0.0,
        mean_cost_usd=math.fsum(float(r.cost_usd) for r in rows) / n if n else 0.0,
        tool_calls=calls,
        tool_errors=errors,
        tool_success=(calls - errors) / calls if calls else None,
    )


def leaderboard(store: Store, suite: str | None, all_suites: list[str]) -> Leaderboard:
    """Rank every agent's newest finished run of ``suite`` by attempt pass rate.

    Ties go to the higher lower bound of the interval (more evidence), then to the name.
    """
    if suite is None:
        return Leaderboard(suite=None, suites=all_suites)
    picked = newest_run_per_agent(store, suite, skip_tag=REPLAY_TAG)
    run_ids = [run.run_id for run in picked]
    rows = attempt_figures(store, run_ids)
    tools = tool_call_counts(store, run_ids)
    entries = [_entry(run, rows[run.run_id], tools.get(run.run_id, _NO_TOOLS)) for run in picked]
    entries = [e for e in entries if e.attempts]
    entries.sort(key=lambda e: (-e.success["estimate"], -e.success["low"], e.agent))
    ranked = [e.model_copy(update={"rank": i}) for i, e in enumerate(entries, start=1)]
    return Leaderboard(suite=suite, suites=all_suites, entries=ranked)
