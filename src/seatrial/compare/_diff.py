"""Trace diff: align two trajectories step by step and find the first step where they diverge.

The common prefix and suffix of the two step lists are paired as they are; the middle is
aligned with :class:`difflib.SequenceMatcher` on the steps' keys, and what it replaces is
paired again by the shape of the steps (same kind, same tool), so a reply is set against a
reply and a surplus tool call shows as an extra step. The first divergence is therefore
always right after the longest common prefix.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from seatrial.compare._render_diff import summarise
from seatrial.compare._steps import Step, models_of, steps_of
from seatrial.record import AttemptRecord
from seatrial.trace import Trace

DivergenceKind = Literal[
    "different_tool",
    "different_arguments",
    "different_tool_result",
    "different_model_answer",
    "different_model_request",
    "different_permission",
    "different_state_change",
    "different_reply",
    "extra_step",
    "missing_step",
]

_SAME_KIND: dict[str, DivergenceKind] = {
    "model_call": "different_model_answer",
    "permission": "different_permission",
    "state_change": "different_state_change",
    "reply": "different_reply",
    "tool_call": "different_tool",
}


@dataclass(frozen=True)
class Row:
    """One aligned row: a step of A, a step of B, or both; ``kind`` None means the same."""

    a: Step | None
    b: Step | None
    kind: DivergenceKind | None


@dataclass(frozen=True)
class Divergence:
    """The first row where the two trajectories differ, and what led to it."""

    row: int
    """0-based index in :attr:`TraceDiff.rows`."""
    kind: DivergenceKind
    a: Step | None
    b: Step | None
    summary: str
    """One sentence naming both sides."""
    led_to: list[Row]
    """The rows just before it (up to 3)."""


def _step_dict(step: Step | None) -> dict[str, Any] | None:
    return None if step is None else step.as_dict()


def _row_dict(index: int, row: Row) -> dict[str, Any]:
    return {"row": index, "kind": row.kind, "a": _step_dict(row.a), "b": _step_dict(row.b)}


@dataclass(frozen=True)
class TraceDiff:
    """Two trajectories aligned, with the first divergence (None when identical)."""

    rows: list[Row]
    first: Divergence | None

    @property
    def identical(self) -> bool:
        """True when every row holds the same step on both sides."""
        return self.first is None

    def to_dict(self) -> dict[str, Any]:
        """JSON for the dashboard: every row with both steps, the first divergence, counts."""
        counts: dict[str, int] = {"rows": len(self.rows), "same": 0}
        for row in self.rows:
            name = row.kind or "same"
            counts[name] = counts.get(name, 0) + 1
        counts["different"] = len(self.rows) - counts["same"]
        first = None
        if self.first is not None:
            first = {
                "row": self.first.row,
                "kind": self.first.kind,
                "summary": self.first.summary,
                "a": _step_dict(self.first.a),
                "b": _step_dict(self.first.b),
                "led_to": [
                    _row_dict(self.first.row - len(self.first.led_to) + i, r)
                    for i, r in enumerate(self.first.led_to)
                ],
            }
        return {
            "identical": self.identical,
            "models": {
                "a": models_of([r.a for r in self.rows if r.a is not None]),
                "b": models_of([r.b for r in self.rows if r.b is not None]),
            },
            "counts": counts,
            "first_divergence": first,
            "rows": [_row_dict(i, row) for i, row in enumerate(self.rows)],
        }


def classify(a: Step, b: Step) -> DivergenceKind | None:
    """How two paired steps differ; None when they are the same."""
    if a.key == b.key:
        return None
    if a.kind != b.kind:
        return "different_tool" if "tool_call" in (a.kind, b.kind) else _SAME_KIND[a.kind]
    if a.kind == "tool_call":
        if a.detail["name"] != b.detail["name"]:
            return "different_tool"
        if a.key[2] != b.key[2]:
            return "different_arguments"
        return "different_tool_result"
    if a.kind == "model_call" and a.key[1] != b.key[1]:
        return "different_model_request"
    return _SAME_KIND[a.kind]


def _shape(step: Step) -> tuple[Any, ...]:
    """What a step is, without what it said: its kind and the tool it concerns."""
    return (step.kind, step.detail.get("name") or step.detail.get("tool"))


def _pair(a: Sequence[Step], b: Sequence[Step]) -> list[Row]:
    """Rows for a replaced block: matched by shape, the rest position by position."""
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(
        None, [_shape(s) for s in a], [_shape(s) for s in b], autojunk=False
    )
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("equal", "replace"):
            for x, y in zip(a[i1:i2], b[j1:j2], strict=False):
                rows.append(Row(x, y, classify(x, y)))
        rows.extend(Row(x, None, "missing_step") for x in a[i1 + (j2 - j1) : i2])
        rows.extend(Row(None, y, "extra_step") for y in b[j1 + (i2 - i1) : j2])
    return rows


def _comparable(a: list[Step], b: list[Step]) -> tuple[list[Step], list[Step]]:
    """Model-call keys reduced to what both sides recorded (a hash, an answer)."""

    def has(steps: list[Step], position: int) -> bool:
        return any(s.kind == "model_call" and s.key[position] is not None for s in steps)

    keep = [has(a, p) and has(b, p) for p in (1, 2)]
    if all(keep):
        return a, b

    def reduce(step: Step) -> Step:
        if step.kind != "model_call":
            return step
        key = ("model_call", *(v if k else None for v, k in zip(step.key[1:3], keep, strict=True)))
        return Step(
            step.index,
            step.kind,
            step.turn,
            step.label,
            (*key, step.key[3]),
            step.span_id,
            step.detail,
        )

    return [reduce(s) for s in a], [reduce(s) for s in b]


def align(a: list[Step], b: list[Step]) -> list[Row]:
    """The aligned rows of two step lists."""
    a, b = _comparable(a, b)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix].key == b[prefix].key:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(a), len(b)) - prefix
        and a[len(a) - 1 - suffix].key == b[len(b) - 1 - suffix].key
    ):
        suffix += 1
    middle_a, middle_b = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    rows = [Row(x, y, None) for x, y in zip(a[:prefix], b[:prefix], strict=True)]
    matcher = difflib.SequenceMatcher(
        None, [s.key for s in middle_a], [s.key for s in middle_b], autojunk=False
    )
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows.extend(
                Row(x, y, None) for x, y in zip(middle_a[i1:i2], middle_b[j1:j2], strict=True)
            )
        else:
            rows.extend(_pair(middle_a[i1:i2], middle_b[j1:j2]))
    rows.extend(
        Row(x, y, None) for x, y in zip(a[len(a) - suffix :], b[len(b) - suffix :], strict=True)
    )
    return rows


def diff_traces(
    a: Trace | None,
    b: Trace | None,
    responses_a: Sequence[str] = (),
    responses_b: Sequence[str] = (),
) -> TraceDiff:
    """Align two trajectories and find their first divergence."""
    rows = align(steps_of(a, responses_a), steps_of(b, responses_b))
    first = None
    for index, row in enumerate(rows):
        if row.kind is not None:
            first = Divergence(
                row=index,
                kind=row.kind,
                a=row.a,
                b=row.b,
                summary=summarise(rows, index),
                led_to=rows[max(0, index - 3) : index],
            )
            break
    return TraceDiff(rows=rows, first=first)


def _responses(record: AttemptRecord) -> list[str]:
    if record.responses:
        return list(record.responses)
    return [record.response] if record.response else []


def diff_attempts(a: AttemptRecord, b: AttemptRecord) -> TraceDiff:
    """Diff two stored attempts (read with their traces)."""
    return diff_traces(a.trace, b.trace, _responses(a), _responses(b))
