"""The check a failed attempt failed: what failure clustering groups by before it embeds.

Two attempts that failed different checks are different problems, however alike their texts
read: ``contains value="工单号"`` and ``is_json`` both have failure type ``format``, and with
Chinese replies a multilingual model puts their reasons closer together than the wordings of
one check. So a check is named by its assertion type and the parameters written in the case
(``contains value="工单号"``, ``length max=200``, ``is_json``); a check the case's fields imply
(``permissions_respected`` from ``permissions:``, ``within_limits`` from ``limits:``) by its
type alone, since the case's policy is not a different check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from seatrial.case import Case
from seatrial.record import AttemptRecord


def failing_check(record: AttemptRecord, case: Case | None) -> str:
    """The first failed hard check of ``record`` (the one its reason leads with), else the
    first failed soft one; "" when none failed (an ERROR, a score under the threshold)."""
    failed = [result for result in record.assertions if result.verdict == "fail"]
    hard = [result for result in failed if result.must_pass]
    if not failed:
        return ""
    chosen = (hard or failed)[0]
    return check_text(chosen.type, _written_params(chosen.id, case))


def check_text(kind: str, params: Mapping[str, Any]) -> str:
    """``type key=value ...``, values as JSON with text as written (sorted keys)."""
    written = [
        f"{key}={json.dumps(value, ensure_ascii=False, sort_keys=True)}"
        for key, value in sorted(params.items())
    ]
    return " ".join([kind, *written])


def _written_params(result_id: str, case: Case | None) -> dict[str, Any]:
    """The parameters of the assertion that gave ``result_id`` (``TYPE``, ``ID`` or ``ID#N``:
    the N-th written with that id), as written; empty for an implied check."""
    if case is None:
        return {}
    base, _, number = result_id.partition("#")
    same = [spec for spec in case.assertions if (spec.id or spec.type) == base]
    index = int(number) - 1 if number.isdigit() else 0
    return same[index].params if 0 <= index < len(same) else {}
