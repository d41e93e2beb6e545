"""Records to rows: every column of the bulk-inserted tables is filled."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seatrial.i18n import phrased
from seatrial.record import AssertionResult, AttemptRecord
from seatrial.store._codec import ATTEMPT_COLUMNS, LINKS_KEY, SPAN_COLUMNS, attempt_rows
from seatrial.store._engine import raw_json, without_nul
from seatrial.store._schema import attempts, spans
from seatrial.trace import SpanLink


def test_bulk_rows_name_every_column_of_their_tables_but_those_the_database_fills() -> None:
    filled_by_database = {c.key for c in attempts.c if c.server_default is not None}
    assert filled_by_database == {"stored_seq"}
    assert sorted(ATTEMPT_COLUMNS) == sorted(set(attempts.c.keys()) - filled_by_database)
    assert sorted(SPAN_COLUMNS) == sorted(spans.c.keys())


def test_each_attempt_gets_its_own_key_shared_by_its_spans(
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    records = [make_attempt("run", attempt=n) for n in (1, 2)]
    attempt_out, span_out = attempt_rows(records)

    keys = [row[ATTEMPT_COLUMNS.index("id")] for row in attempt_out]
    assert len(set(keys)) == 2 and all(len(k) == 32 for k in keys)
    for key, record in zip(keys, records, strict=True):
        mine = [r for r in span_out if r[SPAN_COLUMNS.index("attempt_id")] == key]
        assert record.trace is not None
        assert [r[SPAN_COLUMNS.index("span_id")] for r in mine] == [
            s.span_id for s in record.trace.spans
        ]
        assert [r[SPAN_COLUMNS.index("position")] for r in mine] == list(range(len(mine)))


def _rows_as_before(record: AttemptRecord) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """The rows of one attempt as the codec made them before it read the models' dicts and
    kept the JSON of repeated assertion results: every JSON column ``raw_json`` of the model."""
    metrics, trace = record.metrics, record.trace
    assert trace is not None
    attempt = (
        record.run_id,
        record.case_id,
        record.attempt,
        record.verdict,
        record.failure_type,
        without_nul(record.reason),
        record.score,
        metrics.tool_calls,
        metrics.model_calls,
        metrics.wall_time_ms,
        metrics.input_tokens,
        metrics.output_tokens,
        metrics.cost_usd,
        without_nul(record.response),
        raw_json(record.responses),
        None if record.final_state is None else raw_json(record.final_state),
        None if record.error is None else without_nul(record.error),
        record.user_id,
        record.session_id,
        record.started_at,
        record.finished_at,
        trace.trace_id,
        raw_json(record.assertions),
        record.format_version,
        None if record.snapshot is None else raw_json(record.snapshot),
        None if record.message is None else raw_json(record.message),
    )
    spans = [
        (
            position,
            span.trace_id,
            span.span_id,
            span.parent_span_id,
            without_nul(span.name),
            span.start_time_unix_nano,
            span.end_time_unix_nano,
            raw_json(
                {**span.attributes, LINKS_KEY: [link.model_dump(mode="json") for link in links]}
                if (links := span.links)
                else span.attributes
            ),
            raw_json(span.events),
            span.status,
            without_nul(span.status_message),
        )
        for position, span in enumerate(trace.spans)
    ]
    return attempt, spans


def _results() -> list[AssertionResult]:
    """Results whose JSON a lookup by value could confuse, and results that repeat."""
    plain = {"id": "limits", "level": "L1", "type": "limits", "verdict": "pass"}
    return [
        AssertionResult(**plain, reason="within limits: tool_calls 1 ≤ 3"),
        AssertionResult(**plain, reason="within limits: tool_calls 1 ≤ 3"),
        AssertionResult(**plain, reason="nul \x00 and \\u0000 kept apart", weight=2),
        AssertionResult(**plain, reason="zero", weight=0.0),
        AssertionResult(**plain, reason="zero", weight=-0.0),
        AssertionResult(**plain, reason="graded", score=0.0),
        AssertionResult(**plain, reason="graded", score=-0.0),
        AssertionResult(**plain, reason="graded", score=float("nan")),
        AssertionResult(**plain, reason="graded", score=float("inf")),
        AssertionResult(
            **{**plain, "verdict": "fail"}, reason='"quoted"\n', failure_type="x", must_pass=False
        ),
        # Messages: kept apart when their parameters are equal in Python but not in JSON
        # (True and 1, 1 and 1.0), and when one holds another.
        AssertionResult(**plain, reason="said", message=phrased("{n} calls", n=1)),
        AssertionResult(**plain, reason="said", message=phrased("{n} calls", n=1)),
        AssertionResult(**plain, reason="said", message=phrased("{n} calls", n=True)),
        AssertionResult(**plain, reason="said", message=phrased("{n} calls", n=1.0)),
        AssertionResult(
            **plain, reason="said", message=phrased("{r}", r=phrased("{n} calls", n=1))
        ),
        AssertionResult(**plain, reason="said", span_id="0123456789abcdef"),
        # The same message written with its keys in another order (a plugin's dict) writes
        # other JSON, as does a nested one holding a float.
        AssertionResult(**plain, reason="said", message={"params": {"n": 1}, "id": "{n} calls"}),
        AssertionResult(
            **plain, reason="said", message=phrased("{r}", r=phrased("{n} calls", n=1.0))
        ),
    ]


def test_attempt_rows_are_the_models_own_json_byte_for_byte(
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    records = [
        make_attempt("run", attempt=1),
        make_attempt("run", attempt=2, assertions=_results(), error="boom\x00", final_state=None),
        make_attempt(
            "run",
            attempt=3,
            assertions=_results()[::-1],
            reason="nul \x00",
            message=phrased("{reason}", reason="nul \x00"),
        ),
    ]
    trace = records[2].trace
    assert trace is not None
    trace.spans[0].links = [SpanLink(trace_id="t" * 32, span_id="s" * 16)]
    for _ in range(2):  # the second time, the repeated results come from the kept texts
        attempt_out, span_out = attempt_rows(records)
        for row, record in zip(attempt_out, records, strict=True):
            attempt, spans = _rows_as_before(record)
            assert row[1:] == attempt
            assert [str(c) if c is not None else None for c in row[1:]] == [
                str(c) if c is not None else None for c in attempt
            ]
            mine = [r[1:] for r in span_out if r[0] == row[0]]
            assert mine == spans
