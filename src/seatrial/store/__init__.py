"""The store: runs, their cases, attempts and flat spans, the spend ledger, and the judge's
calibrations, review queue and human labels, in SQLite (default) or PostgreSQL.

``Store.open()`` opens ``.seatrial/seatrial.db`` in the project folder, or the database that
``$SEATRIAL_DB_URL`` (``--db``) names, and migrates its schema with Alembic.
"""

from seatrial.store._attempt_reads import StoredVerdicts
from seatrial.store._codec import EncodedAttempts, encode_attempts
from seatrial.store._gc import KEEP_REASONS, ExpiredRun, GarbageCollection, parse_age
from seatrial.store._golden_chain import ChainProblem
from seatrial.store._golden_records import (
    PENDING_STATUSES,
    GoldenSnapshot,
    GoldenVersion,
    PendingCase,
)
from seatrial.store._judging import (
    QUEUE_SOURCE,
    REVIEW_STATUSES,
    Calibration,
    ReviewItem,
    StoredLabel,
)
from seatrial.store._ledger import LEDGER_FORMAT_VERSION, ModelCallRow
from seatrial.store._reads_boards import (
    TOOL_SPAN_PREFIX,
    AgentRun,
    SkillUse,
    ToolCounts,
    ToolUse,
    newest_run_of_suite,
    newest_run_per_agent,
    newest_suite,
    skill_uses,
    suite_names,
    suite_of_run,
    tool_call_counts,
    tool_uses,
)
from seatrial.store._reads_metrics import (
    AttemptGroup,
    LatestRun,
    RunCount,
    attempt_groups,
    latest_runs,
    run_counts,
)
from seatrial.store._reads_report import (
    CaseCount,
    FirstFailure,
    case_counts,
    first_failures,
    run_figures,
)
from seatrial.store._reads_review import (
    ReviewQueuePage,
    label_counts,
    next_open_review_id,
    open_review_count,
    review_queue_page,
)
from seatrial.store._reads_runs import (
    AttemptFigures,
    RunHead,
    RunQuery,
    RunTotals,
    attempt_figures,
    case_definitions,
    previous_run_id,
    run_heads,
    run_totals,
    runs_by_id,
    runs_matching,
    wall_time_p95,
)
from seatrial.store._schedules import (
    SCHEDULE_STATUSES,
    ScheduleRun,
    ScheduleStatus,
    claim_schedule,
    finish_schedule,
    latest_schedule_runs,
    schedule_history,
)
from seatrial.store._schema import SCHEMA_REVISION
from seatrial.store._store import RUN_STATUSES, Store
from seatrial.store._trace_records import IngestOutcome, TraceCheck, TraceHead, TraceQuery
from seatrial.store._url import DB_URL_ENV, DEFAULT_DB_PATH, mask_url, resolve_url

__all__ = [
    "DB_URL_ENV",
    "DEFAULT_DB_PATH",
    "KEEP_REASONS",
    "LEDGER_FORMAT_VERSION",
    "PENDING_STATUSES",
    "QUEUE_SOURCE",
    "REVIEW_STATUSES",
    "RUN_STATUSES",
    "SCHEDULE_STATUSES",
    "SCHEMA_REVISION",
    "TOOL_SPAN_PREFIX",
    "AgentRun",
    "AttemptFigures",
    "AttemptGroup",
    "Calibration",
    "CaseCount",
    "ChainProblem",
    "EncodedAttempts",
    "ExpiredRun",
    "FirstFailure",
    "GarbageCollection",
    "GoldenSnapshot",
    "GoldenVersion",
    "IngestOutcome",
    "LatestRun",
    "ModelCallRow",
    "PendingCase",
    "ReviewItem",
    "ReviewQueuePage",
    "RunCount",
    "RunHead",
    "RunQuery",
    "RunTotals",
    "ScheduleRun",
    "ScheduleStatus",
    "SkillUse",
    "Store",
    "StoredLabel",
    "StoredVerdicts",
    "ToolCounts",
    "ToolUse",
    "TraceCheck",
    "TraceHead",
    "TraceQuery",
    "attempt_figures",
    "attempt_groups",
    "case_counts",
    "case_definitions",
    "claim_schedule",
    "encode_attempts",
    "finish_schedule",
    "first_failures",
    "label_counts",
    "latest_runs",
    "latest_schedule_runs",
    "mask_url",
    "newest_run_of_suite",
    "newest_run_per_agent",
    "newest_suite",
    "next_open_review_id",
    "open_review_count",
    "parse_age",
    "previous_run_id",
    "resolve_url",
    "review_queue_page",
    "run_counts",
    "run_figures",
    "run_heads",
    "run_totals",
    "runs_by_id",
    "runs_matching",
    "schedule_history",
    "skill_uses",
    "suite_names",
    "suite_of_run",
    "tool_call_counts",
    "tool_uses",
    "wall_time_p95",
]
