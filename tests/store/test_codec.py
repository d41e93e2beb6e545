"""Records to rows: every column of the bulk-inserted tables is filled."""

from __future__ import annotations

from collections.abc import Callable

from seatrial.record import AttemptRecord
from seatrial.store._codec import ATTEMPT_COLUMNS, SPAN_COLUMNS, attempt_rows
from seatrial.store._schema import attempts, spans


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
