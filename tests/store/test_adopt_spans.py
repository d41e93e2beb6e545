"""An attempt adopts the spans its agent exported before the attempt was stored, on SQLite
and PostgreSQL: they move from the production traces onto the attempt, after its own spans,
in the transaction that stores it; spans that come later follow them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from seatrial.errors import InputError, StoreError
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store, TraceQuery
from seatrial.trace import Span, Trace, attrs


@pytest.fixture
def adopt_store(db_url: str) -> Iterator[Store]:
    """An open store without ingested traces (the shared fixture empties only the runs)."""
    with Store.open(db_url) as opened:
        if opened.engine.dialect.name == "postgresql":
            with opened.engine.begin() as connection:
                connection.exec_driver_sql("TRUNCATE traces CASCADE")
        yield opened


def exported(attempt: AttemptRecord, span_id: str, offset_ms: int, name: str) -> Span:
    """A span the agent exported in the attempt's trace, under Seatrial's agent span."""
    assert attempt.trace is not None
    root = attempt.trace.spans[0]
    at = root.start_time_unix_nano + offset_ms * 1_000_000
    operation = attrs.OP_CHAT if name.startswith("chat") else attrs.OP_EXECUTE_TOOL
    return Span(
        trace_id=attempt.trace.trace_id,
        span_id=span_id,
        parent_span_id=root.span_id,
        name=name,
        start_time_unix_nano=at,
        end_time_unix_nano=at + 500_000,
        attributes={attrs.OPERATION: operation, "vendor.step": offset_ms},
        status="ok",
    )


def spans_in_table(store: Store, table: str) -> int:
    """Rows of a span table, counted by the database."""
    with store.engine.connect() as connection:
        return int(connection.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one())


def stored_ids(store: Store, attempt: AttemptRecord) -> list[str]:
    """The span ids of an attempt's stored trace, in stored order."""
    trace = store.attempt_trace(attempt.run_id, attempt.case_id, attempt.attempt)
    return [span.span_id for span in trace.spans]


def test_spans_ingested_before_the_attempt_move_onto_it_after_its_own(
    adopt_store: Store,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    adopt_store.create_run(run, [])
    attempt = make_attempt(run.run_id)
    assert attempt.trace is not None
    own = [span.span_id for span in attempt.trace.spans]
    # Exported out of order, as a batch processor may: stored in start order.
    early = [
        exported(attempt, "e-tool", 20, "execute_tool lookup"),
        exported(attempt, "e-chat", 10, "chat gpt-4o"),
    ]
    adopt_store.save_ingested([Trace(trace_id=attempt.trace.trace_id, spans=early)], source="otlp")
    assert len(adopt_store.trace_heads(TraceQuery())) == 1

    adopt_store.save_attempts([attempt])

    assert stored_ids(adopt_store, attempt) == [*own, "e-chat", "e-tool"]
    trace = adopt_store.attempt_trace(run.run_id, attempt.case_id, attempt.attempt)
    adopted = trace.spans[-1]
    assert adopted.parent_span_id == attempt.trace.spans[0].span_id
    assert adopted.attributes["vendor.step"] == 20
    assert adopt_store.trace_heads(TraceQuery()) == []
    assert spans_in_table(adopt_store, "trace_spans") == 0
    with pytest.raises(InputError, match="no ingested trace"):
        adopt_store.ingested_trace(attempt.trace.trace_id)


def test_an_exported_copy_of_a_span_the_attempt_has_is_not_added_twice(
    adopt_store: Store,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    adopt_store.create_run(run, [])
    attempt = make_attempt(run.run_id)
    assert attempt.trace is not None
    copy = attempt.trace.spans[0].model_copy(update={"name": "invoke_agent (agent's copy)"})
    extra = exported(attempt, "e-chat", 10, "chat gpt-4o")
    adopt_store.save_ingested(
        [Trace(trace_id=attempt.trace.trace_id, spans=[copy, extra])], source="otlp"
    )

    adopt_store.save_attempts([attempt])

    trace = adopt_store.attempt_trace(run.run_id, attempt.case_id, attempt.attempt)
    assert len(trace.spans) == len(attempt.trace.spans) + 1
    assert trace.spans[0].name == attempt.trace.spans[0].name
    assert trace.spans[-1].span_id == "e-chat"


def test_spans_before_and_after_the_attempt_is_stored_line_up_without_repeats(
    adopt_store: Store,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    adopt_store.create_run(run, [])
    attempt = make_attempt(run.run_id)
    assert attempt.trace is not None
    trace_id = attempt.trace.trace_id
    before = exported(attempt, "e-before", 30, "chat gpt-4o")
    adopt_store.save_ingested([Trace(trace_id=trace_id, spans=[before])], source="otlp")
    adopt_store.save_attempts([attempt])

    # An exporter's retry re-sends the adopted span with a new one, which starts earlier.
    after = exported(attempt, "e-after", 5, "execute_tool lookup")
    outcome = adopt_store.save_ingested(
        [Trace(trace_id=trace_id, spans=[before, after])], source="otlp"
    )

    assert (outcome.joined_attempts, outcome.spans, outcome.duplicate_spans) == (1, 1, 1)
    own = [span.span_id for span in attempt.trace.spans]
    assert stored_ids(adopt_store, attempt) == [*own, "e-before", "e-after"]
    with adopt_store.engine.connect() as connection:
        positions = (
            connection.exec_driver_sql("SELECT position FROM spans ORDER BY position")
            .scalars()
            .all()
        )
    assert positions == list(range(len(own) + 2))
    assert adopt_store.trace_heads(TraceQuery()) == []


def test_each_attempt_of_a_batch_adopts_only_its_own_trace(
    adopt_store: Store,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    adopt_store.create_run(run, [])
    first, second, third = (make_attempt(run.run_id, attempt=n) for n in (1, 2, 3))
    assert first.trace is not None and third.trace is not None
    unrelated = Trace(
        trace_id="f" * 32,
        spans=[
            exported(first, "e-other", 1, "chat gpt-4o").model_copy(update={"trace_id": "f" * 32})
        ],
    )
    adopt_store.save_ingested(
        [
            Trace(trace_id=first.trace.trace_id, spans=[exported(first, "e-1", 10, "chat m")]),
            Trace(trace_id=third.trace.trace_id, spans=[exported(third, "e-3", 10, "chat m")]),
            unrelated,
        ],
        source="otlp",
    )

    adopt_store.save_attempts([first, second, third])

    assert stored_ids(adopt_store, first)[-1] == "e-1"
    assert "e-1" not in stored_ids(adopt_store, second)
    assert "e-3" not in stored_ids(adopt_store, second)
    assert stored_ids(adopt_store, third)[-1] == "e-3"
    (left,) = adopt_store.trace_heads(TraceQuery())
    assert left.trace_id == "f" * 32
    assert [s.span_id for s in adopt_store.ingested_trace("f" * 32).spans] == ["e-other"]


def test_a_batch_that_fails_to_store_leaves_the_exported_spans_where_they_were(
    adopt_store: Store,
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
) -> None:
    run = make_run()
    adopt_store.create_run(run, [])
    stored = make_attempt(run.run_id, attempt=1)
    adopt_store.save_attempts([stored])
    fresh = make_attempt(run.run_id, attempt=2)
    assert fresh.trace is not None
    trace_id = fresh.trace.trace_id
    adopt_store.save_ingested(
        [Trace(trace_id=trace_id, spans=[exported(fresh, "e-1", 10, "chat m")])], source="otlp"
    )

    with pytest.raises(StoreError, match="none of this batch was stored"):
        adopt_store.save_attempts([fresh, make_attempt("never-created", attempt=1)])

    assert [s.span_id for s in adopt_store.ingested_trace(trace_id).spans] == ["e-1"]
    assert adopt_store.finished_attempts(run.run_id) == {(stored.case_id, 1)}
