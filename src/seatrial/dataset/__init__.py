"""The dataset center: production traces in (masked), cases out, golden sets, failures.

- ``judge_brief`` reads back, from the run that queued a review item, what its judge was asked
  (the assertion's criteria and the rubric), for the reviewer to label against.
- ``import_tau_bench`` and ``import_tau2`` store a published tau-bench or tau2-bench results
  file as one finished run, so it can be reported, compared and gated like Seatrial's own runs.

Names are imported on first use, as :mod:`seatrial.judge` does: the dashboard imports the
parts it shows (ingestion, cases from traces, approval) without importing case generation,
which calls a model through the gateway.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seatrial.dataset._common import ImportResult
    from seatrial.dataset._contract import (
        RecoveryRow,
        RecoveryTable,
        contract_result,
        contract_suite,
        recovery_table,
        render_recovery_table,
        tool_message,
    )
    from seatrial.dataset._expand import (
        Expansion,
        GenerationError,
        expand_case,
        expand_kinds,
        load_expand_prompt,
    )
    from seatrial.dataset._expand_variants import (
        ADVERSARIAL_KEEPS,
        ADVERSARIAL_KINDS,
        NEAR_DUPLICATE_THRESHOLDS,
        PARAPHRASE_KINDS,
    )
    from seatrial.dataset._failure_names import name_clusters
    from seatrial.dataset._failures import (
        CLUSTER_DISTANCE,
        DEFAULT_CLUSTER_DISTANCE,
        FailureCluster,
        FailureMember,
        cluster_failures,
        cluster_members,
    )
    from seatrial.dataset._from_trace import Proposal, ProposedCase, case_from_trace
    from seatrial.dataset._from_trace_file import (
        cases_file_text,
        write_case_file,
        write_cases_file,
    )
    from seatrial.dataset._from_trace_turns import agent_replies
    from seatrial.dataset._golden import (
        ANTI_HALLUCINATION_MIN,
        MULTI_TURN_SHARE_MIN,
        P0_SHARE_MIN,
        CompositionWarning,
        composition,
        export_golden,
        import_golden,
        is_anti_hallucination,
        parse_dataset_ref,
    )
    from seatrial.dataset._ingest import MaskedBatch, ingest_traces, mask_batch, store_masked
    from seatrial.dataset._mask import MaskedTrace, Masker, MaskFinding
    from seatrial.dataset._mask_settings import BUILTIN_MASK_KINDS, MaskPattern, MaskSettings
    from seatrial.dataset._review_brief import JudgeBrief, judge_brief
    from seatrial.dataset._tau2 import import_tau2
    from seatrial.dataset._tau_bench import import_tau_bench
    from seatrial.dataset._trace_checks import (
        TraceChecksOutcome,
        check_stored_traces,
        check_trace,
        load_trace_checks,
    )
    from seatrial.dataset._trace_query import TraceFilter

_EXPORTS = {
    "ADVERSARIAL_KEEPS": "seatrial.dataset._expand_variants",
    "ADVERSARIAL_KINDS": "seatrial.dataset._expand_variants",
    "NEAR_DUPLICATE_THRESHOLDS": "seatrial.dataset._expand_variants",
    "PARAPHRASE_KINDS": "seatrial.dataset._expand_variants",
    "Expansion": "seatrial.dataset._expand",
    "GenerationError": "seatrial.dataset._expand",
    "expand_case": "seatrial.dataset._expand",
    "expand_kinds": "seatrial.dataset._expand",
    "load_expand_prompt": "seatrial.dataset._expand",
    "ImportResult": "seatrial.dataset._common",
    "JudgeBrief": "seatrial.dataset._review_brief",
    "RecoveryRow": "seatrial.dataset._contract",
    "RecoveryTable": "seatrial.dataset._contract",
    "contract_result": "seatrial.dataset._contract",
    "contract_suite": "seatrial.dataset._contract",
    "recovery_table": "seatrial.dataset._contract",
    "render_recovery_table": "seatrial.dataset._contract",
    "tool_message": "seatrial.dataset._contract",
    "ingest_traces": "seatrial.dataset._ingest",
    "mask_batch": "seatrial.dataset._ingest",
    "store_masked": "seatrial.dataset._ingest",
    "MaskedBatch": "seatrial.dataset._ingest",
    "MaskFinding": "seatrial.dataset._mask",
    "MaskedTrace": "seatrial.dataset._mask",
    "Masker": "seatrial.dataset._mask",
    "BUILTIN_MASK_KINDS": "seatrial.dataset._mask_settings",
    "MaskPattern": "seatrial.dataset._mask_settings",
    "MaskSettings": "seatrial.dataset._mask_settings",
    "ANTI_HALLUCINATION_MIN": "seatrial.dataset._golden",
    "MULTI_TURN_SHARE_MIN": "seatrial.dataset._golden",
    "P0_SHARE_MIN": "seatrial.dataset._golden",
    "CompositionWarning": "seatrial.dataset._golden",
    "composition": "seatrial.dataset._golden",
    "export_golden": "seatrial.dataset._golden",
    "import_golden": "seatrial.dataset._golden",
    "is_anti_hallucination": "seatrial.dataset._golden",
    "judge_brief": "seatrial.dataset._review_brief",
    "parse_dataset_ref": "seatrial.dataset._golden",
    "CLUSTER_DISTANCE": "seatrial.dataset._failures",
    "DEFAULT_CLUSTER_DISTANCE": "seatrial.dataset._failures",
    "FailureCluster": "seatrial.dataset._failures",
    "FailureMember": "seatrial.dataset._failures",
    "cluster_failures": "seatrial.dataset._failures",
    "cluster_members": "seatrial.dataset._failures",
    "name_clusters": "seatrial.dataset._failure_names",
    "Proposal": "seatrial.dataset._from_trace",
    "ProposedCase": "seatrial.dataset._from_trace",
    "case_from_trace": "seatrial.dataset._from_trace",
    "agent_replies": "seatrial.dataset._from_trace_turns",
    "cases_file_text": "seatrial.dataset._from_trace_file",
    "write_case_file": "seatrial.dataset._from_trace_file",
    "write_cases_file": "seatrial.dataset._from_trace_file",
    "TraceChecksOutcome": "seatrial.dataset._trace_checks",
    "check_stored_traces": "seatrial.dataset._trace_checks",
    "check_trace": "seatrial.dataset._trace_checks",
    "load_trace_checks": "seatrial.dataset._trace_checks",
    "TraceFilter": "seatrial.dataset._trace_query",
    "import_tau2": "seatrial.dataset._tau2",
    "import_tau_bench": "seatrial.dataset._tau_bench",
}

__all__ = [
    "ADVERSARIAL_KEEPS",
    "ADVERSARIAL_KINDS",
    "ANTI_HALLUCINATION_MIN",
    "BUILTIN_MASK_KINDS",
    "CLUSTER_DISTANCE",
    "DEFAULT_CLUSTER_DISTANCE",
    "MULTI_TURN_SHARE_MIN",
    "NEAR_DUPLICATE_THRESHOLDS",
    "P0_SHARE_MIN",
    "PARAPHRASE_KINDS",
    "CompositionWarning",
    "Expansion",
    "FailureCluster",
    "FailureMember",
    "GenerationError",
    "ImportResult",
    "JudgeBrief",
    "MaskFinding",
    "MaskPattern",
    "MaskSettings",
    "MaskedBatch",
    "MaskedTrace",
    "Masker",
    "Proposal",
    "ProposedCase",
    "RecoveryRow",
    "RecoveryTable",
    "TraceChecksOutcome",
    "TraceFilter",
    "agent_replies",
    "case_from_trace",
    "cases_file_text",
    "check_stored_traces",
    "check_trace",
    "cluster_failures",
    "cluster_members",
    "composition",
    "contract_result",
    "contract_suite",
    "expand_case",
    "expand_kinds",
    "export_golden",
    "import_golden",
    "import_tau2",
    "import_tau_bench",
    "ingest_traces",
    "is_anti_hallucination",
    "judge_brief",
    "load_expand_prompt",
    "load_trace_checks",
    "mask_batch",
    "name_clusters",
    "parse_dataset_ref",
    "recovery_table",
    "render_recovery_table",
    "store_masked",
    "tool_message",
    "write_case_file",
    "write_cases_file",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.dataset' has no attribute {name!r}")
