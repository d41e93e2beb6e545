"""The store: runs, their cases, attempts and flat spans, the spend ledger, and the judge's
calibrations, review queue and human labels, in SQLite (default) or PostgreSQL.

``Store.open()`` opens ``.seatrial/seatrial.db`` in the project folder, or the database that
``$SEATRIAL_DB_URL`` (``--db``) names, and migrates its schema with Alembic.

The names below are imported when first used: ``seatrial runs`` reads the runs list
(:func:`listed_runs`) without loading the records' models the rest of the store needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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
    "ListedRun",
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
    "listed_runs",
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

_EXPORTS = {
    "AgentRun": "seatrial.store._reads_boards",
    "AttemptFigures": "seatrial.store._reads_runs",
    "AttemptGroup": "seatrial.store._reads_metrics",
    "Calibration": "seatrial.store._judging",
    "CaseCount": "seatrial.store._reads_report",
    "ChainProblem": "seatrial.store._golden_chain",
    "DB_URL_ENV": "seatrial.store._url",
    "DEFAULT_DB_PATH": "seatrial.store._url",
    "EncodedAttempts": "seatrial.store._codec",
    "ExpiredRun": "seatrial.store._gc",
    "FirstFailure": "seatrial.store._reads_report",
    "GarbageCollection": "seatrial.store._gc",
    "GoldenSnapshot": "seatrial.store._golden_records",
    "GoldenVersion": "seatrial.store._golden_records",
    "IngestOutcome": "seatrial.store._trace_records",
    "KEEP_REASONS": "seatrial.store._gc",
    "LEDGER_FORMAT_VERSION": "seatrial.store._ledger",
    "LatestRun": "seatrial.store._reads_metrics",
    "ListedRun": "seatrial.store._listing",
    "ModelCallRow": "seatrial.store._ledger",
    "PENDING_STATUSES": "seatrial.store._golden_records",
    "PendingCase": "seatrial.store._golden_records",
    "QUEUE_SOURCE": "seatrial.store._judging",
    "REVIEW_STATUSES": "seatrial.store._judging",
    "RUN_STATUSES": "seatrial.store._store",
    "ReviewItem": "seatrial.store._judging",
    "ReviewQueuePage": "seatrial.store._reads_review",
    "RunCount": "seatrial.store._reads_metrics",
    "RunHead": "seatrial.store._reads_runs",
    "RunQuery": "seatrial.store._reads_runs",
    "RunTotals": "seatrial.store._reads_runs",
    "SCHEDULE_STATUSES": "seatrial.store._schedules",
    "SCHEMA_REVISION": "seatrial.store._schema",
    "ScheduleRun": "seatrial.store._schedules",
    "ScheduleStatus": "seatrial.store._schedules",
    "SkillUse": "seatrial.store._reads_boards",
    "Store": "seatrial.store._store",
    "StoredLabel": "seatrial.store._judging",
    "StoredVerdicts": "seatrial.store._attempt_reads",
    "TOOL_SPAN_PREFIX": "seatrial.store._reads_boards",
    "ToolCounts": "seatrial.store._reads_boards",
    "ToolUse": "seatrial.store._reads_boards",
    "TraceCheck": "seatrial.store._trace_records",
    "TraceHead": "seatrial.store._trace_records",
    "TraceQuery": "seatrial.store._trace_records",
    "attempt_figures": "seatrial.store._reads_runs",
    "attempt_groups": "seatrial.store._reads_metrics",
    "case_counts": "seatrial.store._reads_report",
    "case_definitions": "seatrial.store._reads_runs",
    "claim_schedule": "seatrial.store._schedules",
    "encode_attempts": "seatrial.store._codec",
    "finish_schedule": "seatrial.store._schedules",
    "first_failures": "seatrial.store._reads_report",
    "label_counts": "seatrial.store._reads_review",
    "latest_runs": "seatrial.store._reads_metrics",
    "latest_schedule_runs": "seatrial.store._schedules",
    "listed_runs": "seatrial.store._listing",
    "mask_url": "seatrial.store._url",
    "newest_run_of_suite": "seatrial.store._reads_boards",
    "newest_run_per_agent": "seatrial.store._reads_boards",
    "newest_suite": "seatrial.store._reads_boards",
    "next_open_review_id": "seatrial.store._reads_review",
    "open_review_count": "seatrial.store._reads_review",
    "parse_age": "seatrial.store._gc",
    "previous_run_id": "seatrial.store._reads_runs",
    "resolve_url": "seatrial.store._url",
    "review_queue_page": "seatrial.store._reads_review",
    "run_counts": "seatrial.store._reads_metrics",
    "run_figures": "seatrial.store._reads_report",
    "run_heads": "seatrial.store._reads_runs",
    "run_totals": "seatrial.store._reads_runs",
    "runs_by_id": "seatrial.store._reads_runs",
    "runs_matching": "seatrial.store._reads_runs",
    "schedule_history": "seatrial.store._schedules",
    "skill_uses": "seatrial.store._reads_boards",
    "suite_names": "seatrial.store._reads_boards",
    "suite_of_run": "seatrial.store._reads_boards",
    "tool_call_counts": "seatrial.store._reads_boards",
    "tool_uses": "seatrial.store._reads_boards",
    "wall_time_p95": "seatrial.store._reads_runs",
}
"""Each public name, by the module that defines it."""

if TYPE_CHECKING:
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
    from seatrial.store._listing import ListedRun, listed_runs
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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.store' has no attribute {name!r}")
