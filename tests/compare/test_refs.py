"""Attempt references: RUN:CASE#N, prefixes and `latest`, the default attempt, clear errors."""

from __future__ import annotations

import pytest

from seatrial.case import Case
from seatrial.compare._refs import AttemptRef, load_attempt, parse_attempt_ref
from seatrial.errors import InputError, RunNotFound
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store

CASES = [f"case-{n:02d}" for n in range(12)]


def stored_run(
    store: Store, run_id: str, started_at: float, verdicts: dict[str, list[str]]
) -> None:
    """A run of CASES; ``verdicts`` gives some cases several attempts (others pass once)."""
    store.create_run(
        RunInfo(run_id=run_id, suite="s", agent="python:agent:v1", started_at=started_at),
        [Case(id=case_id, input="hi") for case_id in CASES],
    )
    records = []
    for case_id in CASES:
        for number, verdict in enumerate(verdicts.get(case_id, ["PASS"]), start=1):
            records.append(
                AttemptRecord(
                    run_id=run_id,
                    case_id=case_id,
                    attempt=number,
                    verdict=verdict,  # type: ignore[arg-type]
                    responses=[f"{case_id} #{number}"],
                )
            )
    store.save_attempts(records)


@pytest.fixture
def runs(store: Store) -> Store:
    stored_run(store, "20260101-000000-aaaaaa", 1.0, {"case-03": ["PASS", "FAIL", "ERROR"]})
    stored_run(store, "20260102-000000-bbbbbb", 2.0, {"case-03": ["PASS", "PASS"]})
    return store


def test_full_reference_with_attempt(runs):
    ref = parse_attempt_ref(runs, "20260101-000000-aaaaaa:case-03#3")
    assert ref == AttemptRef("20260101-000000-aaaaaa", "case-03", 3)
    assert load_attempt(runs, ref).responses == ["case-03 #3"]


def test_default_attempt_is_the_first_that_did_not_pass(runs):
    assert parse_attempt_ref(runs, "20260101:case-03").attempt == 2
    assert parse_attempt_ref(runs, "20260102:case-03").attempt == 1


def test_latest_and_prefix_resolve_like_run_ids(runs):
    assert parse_attempt_ref(runs, "latest:case-00").run_id == "20260102-000000-bbbbbb"
    assert parse_attempt_ref(runs, "20260101:case-00").run_id == "20260101-000000-aaaaaa"


def test_bare_run_takes_case_and_attempt_from_options(runs):
    ref = parse_attempt_ref(runs, "20260101", case="case-03", attempt=3)
    assert ref == AttemptRef("20260101-000000-aaaaaa", "case-03", 3)
    # What the reference itself says wins over the options.
    assert parse_attempt_ref(runs, "20260101:case-03#1", case="case-00", attempt=3).attempt == 1


def test_a_hash_in_a_case_id_is_part_of_the_id_unless_digits_follow(store):
    stored_run(store, "r1", 1.0, {})
    store.create_run(RunInfo(run_id="r2", suite="s", agent="a"), [Case(id="faq#intro", input="x")])
    store.save_attempts(
        [AttemptRecord(run_id="r2", case_id="faq#intro", attempt=1, verdict="PASS")]
    )
    assert parse_attempt_ref(store, "r2:faq#intro") == AttemptRef("r2", "faq#intro", 1)


def test_unknown_case_lists_some_case_ids_and_the_fix(runs):
    with pytest.raises(InputError) as raised:
        parse_attempt_ref(runs, "latest:no-such-case")
    message = str(raised.value)
    assert "no-such-case" in message and "case-00" in message
    assert "12 in all" in message
    assert "case-11" not in message  # a few, not all


def test_unknown_attempt_names_the_stored_ones(runs):
    with pytest.raises(InputError, match=r"no attempt 7 \(stored: 1, 2, 3\)"):
        parse_attempt_ref(runs, "20260101:case-03#7")


def test_run_without_case_asks_for_one(runs):
    with pytest.raises(InputError, match="--case"):
        parse_attempt_ref(runs, "latest")


def test_unknown_run_is_run_not_found(runs):
    with pytest.raises(RunNotFound):
        parse_attempt_ref(runs, "1999:case-00")
