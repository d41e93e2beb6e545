"""Assertions: the registry, L1 trace checks, L2 text and business rules, L3 semantic checks,
and the verdict rules that turn their results into PASS, FAIL or WARNING.

Importing this package registers every built-in assertion type. The evaluator and the judge's
handle are imported when first used: checking a suite (``seatrial validate``) needs the types'
parameter models, not the records an evaluation writes (docs/performance.md, "Starting the
command").
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from seatrial.assertion import (
    _l1_params,
    _l1_permissions,
    _l1_recovery,
    _l1_state,
    _l1_tools,
    _l1_trace,
    _l2,
    _l2_json,
    _l3,
    _rules,
)
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

# The modules above register the built-in types when imported; keep them referenced.
_BUILT_IN_MODULES = (
    _l1_params,
    _l1_permissions,
    _l1_recovery,
    _l1_state,
    _l1_tools,
    _l1_trace,
    _l2,
    _l2_json,
    _l3,
    _rules,
)

_EXPORTS = {
    "Evaluation": "seatrial.assertion._evaluate",
    # Defined by the judge, re-exported for authors of L3 assertions; importing it loads only
    # the judge's lazy package and its handle module (no gateway, no embedding models).
    "JudgeHandle": "seatrial.judge",
    "Planned": "seatrial.assertion._evaluate",
    "evaluate": "seatrial.assertion._evaluate",
    "evaluate_async": "seatrial.assertion._evaluate_async",
    "plan": "seatrial.assertion._evaluate",
}
"""Where each name imported when first used lives."""

if TYPE_CHECKING:
    from seatrial.assertion._evaluate import Evaluation, Planned, evaluate, plan
    from seatrial.assertion._evaluate_async import evaluate_async
    from seatrial.judge import JudgeHandle


def __getattr__(name: str) -> Any:
    # The evaluator builds the result records (seatrial.record and its settings, ~20 pydantic
    # models): a run needs them, checking a suite does not.
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


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
