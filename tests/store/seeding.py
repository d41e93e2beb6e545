"""Filling a store fast for the volume tests: many runs, their cases, attempts and spans.

One attempt is encoded the way the runner encodes it; its rows are copied with fresh keys,
so 10,000 attempts cost tuple copies and bulk inserts, not 10,000 pydantic records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from seatrial.case import Case
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, encode_attempts
from seatrial.store._bulk import insert_many
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS, new_attempt_id
from seatrial.store._schema import attempts, spans
from seatrial.trace import Span, Trace, attrs

SUITES = ("airline", "retail", "telecom", "banking")
AGENTS = ("v1", "v2", "v3", "v4", "v5")
VERDICTS = ("PASS", "PASS", "PASS", "FAIL", "ERROR")

_ID = ATTEMPT_COLUMNS.index("id")
_RUN = ATTEMPT_COLUMNS.index("run_id")
_CASE = ATTEMPT_COLUMNS.index("case_id")
_ATTEMPT = ATTEMPT_COLUMNS.index("attempt")
_VERDICT = ATTEMPT_COLUMNS.index("verdict")
_WALL = ATTEMPT_COLUMNS.index("wall_time_ms")
_TRACE = ATTEMPT_COLUMNS.index("trace_id")
_SPAN_ATTEMPT = SPAN_COLUMNS.index("attempt_id")
_SPAN_TRACE = SPAN_COLUMNS.index("trace_id")


def template_attempt() -> AttemptRecord:
    """An attempt with a four-span trace (agent, chat, tool call, chat) to copy from."""
    start = 1_763_000_000_000_000_000
    trace_id = "0" * 31 + "1"

    def span(span_id: str, name: str, offset: int, **attributes: object) -> Span:
        return Span(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=None if span_id == "a" else "a",
            name=name,
            start_time_unix_nano=start + offset,
            end_time_unix_nano=start + offset + 900_000,
            attributes=attributes,
            status="ok",
        )

    trace = Trace(
        trace_id=trace_id,
        spans=[
            span("a", "invoke_agent booking", 0, **{attrs.OPERATION: attrs.OP_INVOKE_AGENT}),
            span("b", "chat gpt-4o", 1_000, **{attrs.OPERATION: attrs.OP_CHAT}),
            span("c", "execute_tool book", 2_000, **{attrs.TOOL_NAME: "book"}),
            span("d", "chat gpt-4o", 3_000, **{attrs.OPERATION: attrs.OP_CHAT}),
        ],
    )
    return AttemptRecord(
        run_id="template",
        case_id="case-000",
        attempt=1,
        verdict="PASS",
        reason="every assertion passed",
        response="订好了",
        responses=["订好了"],
        started_at=start / 1e9,
        finished_at=start / 1e9 + 1,
        trace=trace,
    )


@dataclass
class Seeded:
    """What was seeded: the runs in start order, and one attempt's trace id."""

    runs: list[RunInfo] = field(default_factory=list)
    trace_id: str = ""


def seed(
    store: Store,
    make_run: Callable[..., RunInfo],
    template: AttemptRecord,
    *,
    runs: int,
    cases: int,
    spans_per_attempt: int = 4,
    run_fields: Callable[[int], dict[str, Any]] | None = None,
) -> Seeded:
    """``runs`` runs of ``cases`` cases with one attempt each, spread over suites and agents.

    Run ``i`` starts at ``1_763_000_000 + i * 3600`` unless ``run_fields(i)`` says otherwise.
    """
    suite_cases = [
        Case(id=f"case-{n:03d}", category=f"cat-{n % 7}", input="hi") for n in range(cases)
    ]
    encoded = encode_attempts([template])
    attempt_template = encoded.attempt_rows[0]
    span_template = encoded.span_rows[:spans_per_attempt]
    seeded = Seeded()
    attempt_rows: list[tuple[Any, ...]] = []
    span_rows: list[tuple[Any, ...]] = []
    for index in range(runs):
        fields: dict[str, Any] = {
            "suite": SUITES[index % len(SUITES)],
            "agent": AGENTS[index % len(AGENTS)],
            "started_at": 1_763_000_000.0 + index * 3600,
            "status": "finished",
        }
        fields.update(run_fields(index) if run_fields else {})
        info = make_run(**fields)
        store.create_run(info, suite_cases)
        seeded.runs.append(info)
        for number, case in enumerate(suite_cases):
            attempt_id = new_attempt_id()
            trace_id = f"{index:08x}{number:024x}"
            row = list(attempt_template)
            row[_ID], row[_RUN], row[_CASE], row[_ATTEMPT] = attempt_id, info.run_id, case.id, 1
            row[_VERDICT] = VERDICTS[(index + number) % len(VERDICTS)]
            row[_WALL] = float(100 + (index * 31 + number * 17) % 900)
            row[_TRACE] = trace_id
            attempt_rows.append(tuple(row))
            for span in span_template:
                copied = list(span)
                copied[_SPAN_ATTEMPT], copied[_SPAN_TRACE] = attempt_id, trace_id
                span_rows.append(tuple(copied))
    _insert(store, attempt_rows, span_rows)
    seeded.trace_id = str(attempt_rows[len(attempt_rows) // 2][_TRACE])
    return seeded


def _insert(
    store: Store, attempt_rows: Sequence[tuple[Any, ...]], span_rows: Sequence[tuple[Any, ...]]
) -> None:
    with store.engine.begin() as connection:
        insert_many(connection, attempts, ATTEMPT_COLUMNS, list(attempt_rows))
        insert_many(connection, spans, SPAN_COLUMNS, list(span_rows))
