"""The named queries behind a run's report (its figures counted by the database, and its
attempts read a page at a time), against SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from seatrial.case import Case
from seatrial.i18n import Message, phrased
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import (
    CaseCount,
    FirstFailure,
    Store,
    case_counts,
    first_failures,
    run_figures,
)

MakeRun = Callable[..., RunInfo]


def said(case_id: str, n: int, verdict: str) -> Message:
    return phrased("{case} #{n} {verdict}", case=case_id, n=n, verdict=verdict)


MakeAttempt = Callable[..., AttemptRecord]


@pytest.fixture
def run_id(store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]) -> str:
    """A run listing book-flight, cancel and baggage (suite order, not id order), with attempts
    of two of them and of a case it does not list."""
    store.create_run(make_run("r1"), cases)

    def attempt(
        case_id: str, n: int, verdict: str, failure_type: str | None = None
    ) -> AttemptRecord:
        return make_attempt(
            "r1",
            case_id,
            n,
            verdict=verdict,
            failure_type=failure_type,
            reason=f"{case_id} #{n} {verdict}",
            # Stored with its reason as a message, except the cancel case's ERROR (an agent's
            # error is said as text).
            message=None if verdict == "ERROR" else said(case_id, n, verdict),
        )

    store.save_attempts(
        [
            attempt("cancel", 3, "FAIL", "wrong_params"),
            attempt("cancel", 1, "PASS"),
            attempt("cancel", 2, "ERROR", "timeout"),
            attempt("book-flight", 2, "FAIL", "wrong_params"),
            attempt("book-flight", 1, "PASS"),
            attempt("book-flight", 3, "FAIL", "wrong_params"),
            attempt("zz-unlisted", 1, "FAIL", "timeout"),
            attempt("aa-unlisted", 1, "PASS"),
        ]
    )
    return "r1"


def test_case_counts_count_the_listed_cases_attempts_by_verdict_and_failure_type_in_suite_order(
    store: Store, run_id: str
) -> None:
    counts = case_counts(store, run_id)
    assert [row.case_id for row in counts] == ["book-flight"] * 2 + ["cancel"] * 3
    assert sorted(counts, key=lambda r: (r.case_id, r.verdict)) == [
        CaseCount("book-flight", "FAIL", "wrong_params", 2),
        CaseCount("book-flight", "PASS", None, 1),
        CaseCount("cancel", "ERROR", "timeout", 1),
        CaseCount("cancel", "FAIL", "wrong_params", 1),
        CaseCount("cancel", "PASS", None, 1),
    ]
    assert case_counts(store, "no-such-run") == []


def test_first_failures_are_each_cases_lowest_numbered_attempt_that_did_not_pass(
    store: Store, run_id: str
) -> None:
    assert first_failures(store, run_id) == {
        "book-flight": FirstFailure(
            "book-flight",
            2,
            "wrong_params",
            "book-flight #2 FAIL",
            said("book-flight", 2, "FAIL"),
        ),
        "cancel": FirstFailure("cancel", 2, "timeout", "cancel #2 ERROR", None),
        "zz-unlisted": FirstFailure(
            "zz-unlisted", 1, "timeout", "zz-unlisted #1 FAIL", said("zz-unlisted", 1, "FAIL")
        ),
    }


def test_run_figures_come_in_suite_order_then_unlisted_cases_by_id(
    store: Store, run_id: str
) -> None:
    def keys(listed_only: bool) -> list[tuple[str, str]]:
        return [(f.case_id, f.verdict) for f in run_figures(store, run_id, listed_only=listed_only)]

    listed = [("book-flight", "PASS"), ("book-flight", "FAIL"), ("book-flight", "FAIL")]
    listed += [("cancel", "PASS"), ("cancel", "ERROR"), ("cancel", "FAIL")]
    assert keys(listed_only=True) == listed
    assert keys(listed_only=False) == listed + [("aa-unlisted", "PASS"), ("zz-unlisted", "FAIL")]
    # The figures are the stored record's.
    first = next(run_figures(store, run_id))
    (record,) = store.attempts(run_id, "book-flight")[:1]
    assert (first.wall_time_ms, first.tokens, first.cost_usd, first.tool_calls) == (
        record.metrics.wall_time_ms,
        record.metrics.tokens,
        pytest.approx(record.metrics.cost_usd),
        record.metrics.tool_calls,
    )


@pytest.mark.parametrize("page", [1, 2, 3, 500])
def test_attempts_in_pages_are_the_stored_attempts_in_the_order_asked(
    store: Store, run_id: str, page: int
) -> None:
    wanted = [("cancel", 3), ("aa-unlisted", 1), ("book-flight", 3), ("baggage", 0)]
    read = list(store.attempts_in_pages(run_id, wanted, page))
    assert [(r.case_id, r.attempt) for r in read] == [
        ("cancel", 1),
        ("cancel", 2),
        ("cancel", 3),
        ("aa-unlisted", 1),
        ("book-flight", 1),
        ("book-flight", 2),
        ("book-flight", 3),
    ]
    stored = {(r.case_id, r.attempt): r for r in store.attempts(run_id)}
    assert read == [stored[(r.case_id, r.attempt)] for r in read]  # whole records, no trace
    assert all(r.trace is None for r in read)


def test_attempts_in_pages_reads_a_case_whose_count_is_stale_whole(
    store: Store, run_id: str
) -> None:
    # Counts only size the pages: a case with more attempts than said still comes whole.
    read = store.attempts_in_pages(run_id, [("cancel", 1), ("book-flight", 1)], 2)
    assert [(r.case_id, r.attempt) for r in read] == [
        ("cancel", 1),
        ("cancel", 2),
        ("cancel", 3),
        ("book-flight", 1),
        ("book-flight", 2),
        ("book-flight", 3),
    ]
