"""Comparing runs: statistics, gates, comparisons, flaky cases, trace diff.

This package owns what release gates mean on a run: each check's figure
(:func:`evaluate_gates`), the run's verdict (:func:`run_meets_gates`), what a run stores about
its gates (:func:`gate_settings`) and whether their source changed since (:func:`gates_changed`).
The gates' written format is :class:`seatrial.case.GateSpec`.
"""

from seatrial.compare._baseline import (
    BRANCH_TAG,
    LATEST,
    LATEST_PASSING,
    resolve_run_ref,
    run_branch,
)
from seatrial.compare._bench import (
    BENCH_TAG_PREFIX,
    bench_leaderboard,
    bench_record,
    bench_tag,
    new_bench_id,
)
from seatrial.compare._compare import (
    TRANSITIONS,
    CaseChange,
    Comparison,
    GroupDelta,
    MetricDelta,
    Transition,
    compare,
    compare_runs,
)
from seatrial.compare._diff import (
    Divergence,
    DivergenceKind,
    Row,
    TraceDiff,
    diff_attempts,
    diff_traces,
)
from seatrial.compare._distance import ks_statistic, total_variation
from seatrial.compare._drift import (
    METRICS,
    POOLED,
    DriftAlarm,
    DriftReport,
    DriftThresholds,
    MetricDrift,
    default_baseline,
    probe_drift,
)
from seatrial.compare._flaky import REPLAY_TAG, agent_version, flaky_cases
from seatrial.compare._gate_source import (
    gate_settings,
    gates_changed,
    stored_baseline_id,
    stored_gates,
)
from seatrial.compare._gates import GateOutcome, builtin_outcomes, evaluate_gates
from seatrial.compare._leaderboard import (
    AgentDifference,
    BoardRun,
    Leaderboard,
    LeaderboardEntry,
    differences_from_best,
    rank_runs,
)
from seatrial.compare._refs import AttemptRef, load_attempt, parse_attempt_ref
from seatrial.compare._render_compare import (
    TRANSITION_TITLES,
    change_text,
    headline,
    metric_number,
    to_markdown,
    to_text,
)
from seatrial.compare._render_diff import (
    AttemptHeader,
    diff_json,
    header_of,
    render_markdown,
    render_terminal,
)
from seatrial.compare._render_leaderboard import (
    leaderboard_json,
    leaderboard_markdown,
    leaderboard_table,
)
from seatrial.compare._runs import CaseOutcome, RunData, load_run, outcome_of, verdict_of_repeats
from seatrial.compare._stale import StaleCase, StaleReport, stale_cases
from seatrial.compare._stats import (
    Interval,
    Latency,
    Paired,
    holm_adjust,
    latency_summary,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    newcombe_difference,
    paired_outcomes,
    pass_at_k,
    pass_hat_k,
    percentile,
    significant_drop,
    wilson_interval,
)
from seatrial.compare._steps import Step, StepKind, steps_of
from seatrial.compare._summary import PassK, RunStatistics, run_statistics
from seatrial.compare._verdict import GateResult, run_meets_gates, stored_baseline

__all__ = [
    "BENCH_TAG_PREFIX",
    "BRANCH_TAG",
    "LATEST",
    "LATEST_PASSING",
    "METRICS",
    "POOLED",
    "REPLAY_TAG",
    "TRANSITIONS",
    "TRANSITION_TITLES",
    "AgentDifference",
    "AttemptHeader",
    "AttemptRef",
    "BoardRun",
    "CaseChange",
    "CaseOutcome",
    "Comparison",
    "Divergence",
    "DivergenceKind",
    "DriftAlarm",
    "DriftReport",
    "DriftThresholds",
    "GateOutcome",
    "GateResult",
    "GroupDelta",
    "Interval",
    "Latency",
    "Leaderboard",
    "LeaderboardEntry",
    "MetricDelta",
    "MetricDrift",
    "Paired",
    "PassK",
    "Row",
    "RunData",
    "RunStatistics",
    "StaleCase",
    "StaleReport",
    "Step",
    "StepKind",
    "TraceDiff",
    "Transition",
    "agent_version",
    "bench_leaderboard",
    "bench_record",
    "bench_tag",
    "builtin_outcomes",
    "change_text",
    "compare",
    "compare_runs",
    "default_baseline",
    "diff_attempts",
    "diff_json",
    "diff_traces",
    "differences_from_best",
    "evaluate_gates",
    "flaky_cases",
    "gate_settings",
    "gates_changed",
    "header_of",
    "headline",
    "holm_adjust",
    "ks_statistic",
    "latency_summary",
    "leaderboard_json",
    "leaderboard_markdown",
    "leaderboard_table",
    "load_attempt",
    "load_run",
    "mcnemar_exact",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "metric_number",
    "new_bench_id",
    "newcombe_difference",
    "outcome_of",
    "paired_outcomes",
    "parse_attempt_ref",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "probe_drift",
    "rank_runs",
    "render_markdown",
    "render_terminal",
    "resolve_run_ref",
    "run_branch",
    "run_meets_gates",
    "run_statistics",
    "significant_drop",
    "stale_cases",
    "steps_of",
    "stored_baseline",
    "stored_baseline_id",
    "stored_gates",
    "to_markdown",
    "to_text",
    "total_variation",
    "verdict_of_repeats",
    "wilson_interval",
]
