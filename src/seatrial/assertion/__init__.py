"""Assertions: the registry, L1 trace checks, L2 text and business rules, L3 semantic checks,
and the verdict rules that turn their results into PASS, FAIL or WARNING.

Importing this package registers every built-in assertion type.
"""

from seatrial.assertion import (
    _l1_params,
    _l1_permissions,
    _l1_recovery,
    _l1_state,
    _l1_tools,
    _l1_trace,
    _l2,
    _l3,
    _rules,
)
from seatrial.assertion._evaluate import Evaluation, Planned, evaluate, plan
from seatrial.assertion._evaluate_async import evaluate_async
from seatrial.assertion._l1_recovery import Recovery, recoveries
from seatrial.assertion._registry import (
    AssertionContext,
    AssertionParams,
    AssertionType,
    Check,
    ReviewRequest,
    aliases,
    assertion,
    known_types,
    lookup,
)

# Defined by the judge, re-exported for authors of L3 assertions; importing it loads only the
# judge's lazy package and its handle module (no gateway, no embedding models).
from seatrial.judge import JudgeHandle

# The modules above register the built-in types when imported; keep them referenced.
_BUILT_IN_MODULES = (
    _l1_params,
    _l1_permissions,
    _l1_recovery,
    _l1_state,
    _l1_tools,
    _l1_trace,
    _l2,
    _l3,
    _rules,
)

__all__ = [
    "AssertionContext",
    "AssertionParams",
    "AssertionType",
    "Check",
    "Evaluation",
    "JudgeHandle",
    "Planned",
    "Recovery",
    "ReviewRequest",
    "aliases",
    "assertion",
    "evaluate",
    "evaluate_async",
    "known_types",
    "lookup",
    "plan",
    "recoveries",
]
