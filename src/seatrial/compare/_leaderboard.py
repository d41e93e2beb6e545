"""A leaderboard: agents on one suite, ranked by success, with the differences that are real.

Each row is one stored run of one agent: success with its Wilson interval, pass^k and pass@k
(k = the repeats), latency p50/p95, tokens, cost per success, tool success, failure types.
Below the rows, each agent is set against the best one on the cases both ran: an exact
McNemar test on the cases' verdicts (a case passes when most of its repeats pass, as
everywhere in Seatrial), Holm-adjusted over the comparisons, said in words ("A beats B: 94%
vs 50% of the 16 cases both ran, p = 0.008"). The benchmark (``seatrial bench``) and the
dashboard's leaderboard page build theirs here.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from seatrial.compare._plain import agents_in_words, with_meaning
from seatrial.compare._runs import verdict_of_repeats
from seatrial.compare._stats import (
    holm_adjust,
    latency_summary,
    mean_pass_at_k,
    mean_pass_hat_k,
    paired_outcomes,
    wilson_interval,
)
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext
from seatrial.record import Verdict
from seatrial.store import AgentRun, AttemptFigures, Store, attempt_figures, tool_call_counts

ALPHA = 0.05
"""Below this Holm-adjusted p-value a difference is called significant."""


class LeaderboardEntry(BaseModel):
    """One agent's figures on the suite, from one stored run."""

    rank: int
    """1 for the agent with the highest success."""
    agent: str
    """The agent as named on the board (the name given to ``seatrial bench``, else the
    spec)."""
    spec: str
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
    """The most repeats any case has; pass^k and pass@k are given for this k when above 1."""
    pass_hat_k: float | None
    """Chance that all k repeats of a case pass (tau-bench's pass^k, mean over cases)."""
    pass_at_k: float | None = None
    """Chance that at least one of k repeats of a case passes (mean over cases)."""
    latency_p50_ms: float | None
    """Median attempt wall time in milliseconds (None for imported runs without times)."""
    latency_p95_ms: float | None
    """95th percentile of attempt wall time in milliseconds."""
    mean_tokens: float
    """Input plus output tokens per attempt, on average."""
    mean_cost_usd: float
    """Cost in US dollars per attempt, on average."""
    cost_usd: float = 0.0
    """Cost in US dollars of all the run's attempts."""
    cost_per_success: float | None = None
    """Cost in US dollars per passing attempt; None when none passed."""
    tool_calls: int
    """``execute_tool`` spans of the run."""
    tool_errors: int
    """Of them, those that ended in an error (status ``error``: an exception, a denial)."""
    tool_success: float | None
    """Share of tool calls without an error; None when no tool was called."""
    failure_types: dict[str, int] = Field(default_factory=dict)
    """Attempts that did not pass, by failure type (``unknown`` when none was given), most
    frequent first."""


class AgentDifference(BaseModel):
    """One agent set against the best agent on the cases both ran."""

    best: str
    """The best agent (rank 1)."""
    other: str
    """The agent set against it."""
    cases: int
    """Cases both ran (the pairs the test counts)."""
    best_rate: float
    """Share of those cases the best agent passed (case verdict over its repeats)."""
    other_rate: float
    """Share of those cases the other agent passed."""
    best_only: int
    """Cases only the best agent passed."""
    other_only: int
    """Cases only the other agent passed."""
    p_value: float
    """Two-sided exact McNemar p-value on the discordant cases."""
    p_adjusted: float
    """The p-value after Holm's adjustment over every comparison on the board."""
    significant: bool
    """``p_adjusted`` is below the board's alpha."""
    sentence: str
    """The comparison in words, e.g. ``"A beats B: 94% vs 50% of the 16 cases both ran,
    p = 0.008"``."""


class Leaderboard(BaseModel):
    """Agents ranked on one suite, with the significant differences named."""

    suite: str | None
    """The suite ranked (None when the store holds no run)."""
    bench_id: str | None = None
    """The benchmark the runs belong to (``seatrial bench``); None for the dashboard's
    newest-run-per-agent board."""
    entries: list[LeaderboardEntry] = Field(default_factory=list)
    """One per agent, best first."""
    differences: list[AgentDifference] = Field(default_factory=list)
    """Each agent below the best, set against it, in rank order."""
    alpha: float = ALPHA
    """Significance level of the differences (after Holm's adjustment)."""
    method: str = ""
    """How the differences were tested, in a sentence."""


@dataclass(frozen=True)
class BoardRun:
    """A run to put on a board, and the name to show for its agent."""

    name: str
    run: AgentRun


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _entry(
    name: str, run: AgentRun, rows: Sequence[AttemptFigures], calls: int, errors: int
) -> LeaderboardEntry:
    per_case: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        per_case[row.case_id].append(row.verdict == "PASS")
    counts = [(len(v), sum(v)) for v in per_case.values()]
    passes = sum(c for _, c in counts)
    k = max((n for n, _ in counts), default=0)
    timed = run.settings.times != "synthesised"
    latency = latency_summary([float(r.wall_time_ms) for r in rows]) if timed else None
    n = len(rows)
    cost = math.fsum(float(r.cost_usd) for r in rows)
    failures = Counter(r.failure_type or "unknown" for r in rows if r.verdict != "PASS")
    return LeaderboardEntry(
        rank=0,
        agent=name,
        spec=run.agent,
        run_id=run.run_id,
        started_at=run.started_at,
        cases=len(per_case),
        attempts=n,
        passes=passes,
        success=wilson_interval(passes, n).as_dict(),
        k=k,
        pass_hat_k=mean_pass_hat_k(counts, k) if k > 1 else None,
        pass_at_k=mean_pass_at_k(counts, k) if k > 1 else None,
        latency_p50_ms=None if latency is None else latency.p50,
        latency_p95_ms=None if latency is None else latency.p95,
        mean_tokens=math.fsum(float(r.tokens) for r in rows) / n if n else 0.0,
        mean_cost_usd=cost / n if n else 0.0,
        cost_usd=cost,
        cost_per_success=cost / passes if passes else None,
        tool_calls=calls,
        tool_errors=errors,
        tool_success=(calls - errors) / calls if calls else None,
        failure_types=dict(failures.most_common()),
    )


def _case_passed(rows: Sequence[AttemptFigures]) -> dict[str, bool]:
    verdicts: dict[str, list[Verdict]] = defaultdict(list)
    for row in rows:
        verdicts[row.case_id].append(row.verdict)
    return {case: verdict_of_repeats(v) == "PASS" for case, v in verdicts.items()}


def differences_from_best(
    entries: Sequence[LeaderboardEntry],
    passed: dict[str, dict[str, bool]],
    alpha: float = ALPHA,
) -> list[AgentDifference]:
    """Each entry below the first set against the first, on the cases both ran.

    ``passed`` holds, per run id, whether each case passed. The p-values are exact McNemar
    on the discordant cases, Holm-adjusted over the comparisons; the sentence names the agent
    ahead on those cases, and says "not significant" when the adjusted p-value is not below
    ``alpha``.
    """
    if len(entries) < 2:
        return []
    best, others = entries[0], entries[1:]
    pairs = [paired_outcomes(passed[best.run_id], passed[other.run_id]) for other in others]
    adjusted = holm_adjust([pair.p_value for pair in pairs])
    found = []
    for other, pair, p_adj in zip(others, pairs, adjusted, strict=True):
        shared = pair.both_pass + pair.base_only + pair.cand_only + pair.both_fail
        best_rate = (pair.both_pass + pair.base_only) / shared if shared else 0.0
        other_rate = (pair.both_pass + pair.cand_only) / shared if shared else 0.0
        significant = shared > 0 and p_adj < alpha
        # Ranked on attempts, paired on cases: the one ahead on the cases is named first.
        ahead = [(best.agent, best_rate), (other.agent, other_rate)]
        if other_rate > best_rate:
            ahead.reverse()
        (first, first_rate), (second, second_rate) = ahead
        differing = pair.base_only + pair.cand_only
        if not shared:
            text = _("{best} and {other} ran no case in common: nothing to compare").format(
                best=best.agent, other=other.agent
            )
        elif significant:
            text = with_meaning(
                _(
                    "{first} beats {second}: {first_rate} vs {second_rate} of the {shared} "
                    "cases both ran, {p}"
                ).format(
                    first=first,
                    second=second,
                    first_rate=f"{first_rate:.0%}",
                    second_rate=f"{second_rate:.0%}",
                    shared=shared,
                    p=_p_text(p_adj),
                ),
                agents_in_words(True, first, second, differing),
            )
        else:
            text = with_meaning(
                _(
                    "{best} vs {other}: {best_rate} vs {other_rate} of the {shared} cases "
                    "both ran, {p}: not significant"
                ).format(
                    best=best.agent,
                    other=other.agent,
                    best_rate=f"{best_rate:.0%}",
                    other_rate=f"{other_rate:.0%}",
                    shared=shared,
                    p=_p_text(p_adj),
                ),
                agents_in_words(False, first, second, differing),
            )
        found.append(
            AgentDifference(
                best=best.agent,
                other=other.agent,
                cases=shared,
                best_rate=best_rate,
                other_rate=other_rate,
                best_only=pair.base_only,
                other_only=pair.cand_only,
                p_value=pair.p_value,
                p_adjusted=p_adj,
                significant=significant,
                sentence=text,
            )
        )
    return found


def method_sentence(comparisons: int, alpha: float = ALPHA) -> str:
    """How a board's differences are tested, in a sentence for its footer."""
    if comparisons == 0:
        return _("One agent on the board: nothing to compare.")
    return ngettext(
        "Each agent is set against the best on the cases both ran: exact McNemar test on the "
        "case verdicts (a case passes when most of its repeats pass), p-values adjusted for "
        "{count} comparison with Holm's method; significant when below {alpha}.",
        "Each agent is set against the best on the cases both ran: exact McNemar test on the "
        "case verdicts (a case passes when most of its repeats pass), p-values adjusted for "
        "{count} comparisons with Holm's method; significant when below {alpha}.",
        comparisons,
    ).format(count=comparisons, alpha=f"{alpha:g}")


def rank_runs(
    store: Store,
    picked: Sequence[BoardRun],
    suite: str | None,
    bench_id: str | None = None,
    alpha: float = ALPHA,
) -> Leaderboard:
    """The leaderboard of the runs ``picked``: one entry each, ranked, with the differences.

    Ranked by attempt pass rate; ties go to the higher lower bound of the interval (more
    evidence), then to the name. Runs with no stored attempt are left out. Reads the runs'
    attempt figures and tool-call counts (two queries over the chosen runs only).
    """
    run_ids = [board.run.run_id for board in picked]
    rows = attempt_figures(store, run_ids)
    tools = tool_call_counts(store, run_ids)
    entries = []
    for board in picked:
        calls, errors = tools.get(board.run.run_id, (0, 0))
        entries.append(_entry(board.name, board.run, rows[board.run.run_id], calls, errors))
    entries = [e for e in entries if e.attempts]
    entries.sort(key=lambda e: (-e.success["estimate"], -e.success["low"], e.agent))
    ranked = [e.model_copy(update={"rank": i}) for i, e in enumerate(entries, start=1)]
    passed = {e.run_id: _case_passed(rows[e.run_id]) for e in ranked}
    differences = differences_from_best(ranked, passed, alpha)
    return Leaderboard(
        suite=suite,
        bench_id=bench_id,
        entries=ranked,
        differences=differences,
        alpha=alpha,
        method=method_sentence(len(differences), alpha) if ranked else "",
    )
