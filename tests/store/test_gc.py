"""``Store.collect_garbage``: old runs go with everything tied to them; kept runs stay whole."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import func, select

from seatrial.errors import InputError
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import ModelCallRow, Store, parse_age
from seatrial.store._schema import attempts, run_cases, run_tags, spans
from tests.conftest import queued_items

DAY = 86_400.0
NOW = 1_780_000_000.0
CUTOFF = NOW - 90 * DAY


@pytest.fixture
def old_run(store: Store, make_run: Callable[..., RunInfo]) -> Callable[..., RunInfo]:
    """Store a finished run that ended ``days`` days before the cutoff (negative: after)."""

    def make(days: float = 10, **fields: object) -> RunInfo:
        ended = CUTOFF - days * DAY
        values: dict[str, object] = {
            "status": "finished",
            "started_at": ended - 600,
            "finished_at": ended,
        }
        values.update(fields)
        info = make_run(**values)
        store.create_run(info, [])
        return info

    return make


def stored_ids(store: Store) -> set[str]:
    return {info.run_id for info in store.list_runs(limit=None)}


def count(store: Store, table: object, run_id: str | None = None) -> int:
    with store.engine.connect() as connection:
        if table is spans:
            query = select(func.count()).select_from(
                spans.join(attempts, spans.c.attempt_id == attempts.c.id)
            )
            if run_id is not None:
                query = query.where(attempts.c.run_id == run_id)
            return int(connection.execute(query).scalar_one())
        query = select(func.count()).select_from(table)  # type: ignore[arg-type]
        if run_id is not None:
            query = query.where(table.c.run_id == run_id)  # type: ignore[attr-defined]
        return int(connection.execute(query).scalar_one())


def test_an_old_untagged_run_goes_with_its_attempts_spans_cases_spend_and_open_reviews(
    store: Store,
    old_run: Callable[..., RunInfo],
    make_run: Callable[..., RunInfo],
    make_attempt: Callable[..., AttemptRecord],
    cases: list,
) -> None:
    old = make_run(status="finished", started_at=CUTOFF - 20 * DAY, finished_at=CUTOFF - 20 * DAY)
    store.create_run(old, cases)
    store.save_attempts([make_attempt(old.run_id, attempt=n) for n in (1, 2)])
    store.record_model_calls([ModelCallRow(run_id=old.run_id, model="gpt-4o", cost_usd=0.01)])
    open_item, labelled_item, _ = queued_items()
    store.add_review_items(
        [
            open_item.model_copy(update={"run_id": old.run_id}),
            labelled_item.model_copy(update={"run_id": old.run_id}),
        ]
    )
    store.label_review_item(labelled_item.id, "pass", None, "", "mia")
    young = old_run(days=-1)  # a run that ended after the cutoff
    store.save_attempts([make_attempt(young.run_id)])
    assert count(store, spans, old.run_id) > 0

    done = store.collect_garbage(CUTOFF)

    assert [run.run_id for run in done.deleted] == [old.run_id]
    assert stored_ids(store) == {young.run_id}
    for table in (attempts, spans, run_cases, run_tags):
        assert count(store, table, old.run_id) == 0
    assert count(store, attempts, young.run_id) == 1
    assert count(store, spans) == count(store, spans, young.run_id) > 0
    assert store.spend(old.run_id) == 0.0
    # The open review item pointed at the run; the labelled one is calibration data.
    assert [item.id for item in store.review_items(None, run_id=old.run_id)] == [labelled_item.id]
    assert len(store.labels()) == 1


def test_a_run_one_day_younger_than_the_cutoff_stays(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    older = old_run(days=1, agent="a")
    younger = old_run(days=-1, agent="a")

    store.collect_garbage(CUTOFF)

    assert stored_ids(store) == {younger.run_id}
    assert older.run_id not in stored_ids(store)


def test_a_run_that_started_before_the_cutoff_but_finished_after_stays(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    long_run = old_run(days=-0.5, started_at=CUTOFF - DAY)
    old_run(days=3)  # so the long run is not kept only for being its suite's newest

    store.collect_garbage(CUTOFF)

    assert long_run.run_id in stored_ids(store)


def test_baselines_of_staying_runs_stay_down_the_chain(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    first = old_run(days=30)
    second = old_run(days=20, settings={"baseline": {"run_id": first.run_id}})
    unrelated = old_run(days=10)
    current = old_run(days=-5, settings={"baseline": {"run_id": second.run_id}})

    done = store.collect_garbage(CUTOFF)

    assert stored_ids(store) == {first.run_id, second.run_id, current.run_id}
    assert [run.run_id for run in done.deleted] == [unrelated.run_id]
    assert done.kept_by_reason() == {"baseline": 2}


def test_the_baseline_of_a_deleted_run_goes_with_it(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    base = old_run(days=30)
    old_run(days=20, settings={"baseline": {"run_id": base.run_id}})
    newest = old_run(days=-1)

    store.collect_garbage(CUTOFF)

    assert stored_ids(store) == {newest.run_id}


def test_tagged_golden_set_and_running_runs_stay_and_a_replay_tag_keeps_nothing(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    tagged = old_run(days=40, tags=["release-1.4"])
    golden = old_run(days=30, settings={"dataset": {"name": "support", "version": 3}})
    running = old_run(days=20, status="running", finished_at=None)
    replayed = old_run(days=15, tags=["replay"])
    plain = old_run(days=10)
    old_run(days=-1)

    done = store.collect_garbage(CUTOFF, ignore_tags=["replay"])

    kept = {run.run_id: run.kept for run in done.runs if run.kept}
    assert kept == {
        tagged.run_id: "tagged",
        golden.run_id: "golden set",
        running.run_id: "running",
    }
    assert {tagged.run_id, golden.run_id, running.run_id} <= stored_ids(store)
    assert not {replayed.run_id, plain.run_id} & stored_ids(store)


def test_the_newest_finished_run_of_a_suite_and_agent_stays_however_old(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    older = old_run(days=200, suite="legacy", agent="v1")
    newest = old_run(days=100, suite="legacy", agent="v1")
    other_agent = old_run(days=300, suite="legacy", agent="v0")
    interrupted = old_run(days=50, suite="legacy", agent="v1", status="interrupted")

    done = store.collect_garbage(CUTOFF)

    assert stored_ids(store) == {newest.run_id, other_agent.run_id}
    assert {run.run_id for run in done.deleted} == {older.run_id, interrupted.run_id}


def test_a_dry_run_reports_what_would_go_and_deletes_nothing(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    gone = [old_run(days=days) for days in (30, 20)]
    kept = old_run(days=10, tags=["golden"])
    young = old_run(days=-1)

    planned = store.collect_garbage(CUTOFF, dry_run=True)

    assert planned.dry_run
    assert [run.run_id for run in planned.deleted] == [run.run_id for run in gone]
    assert stored_ids(store) == {*(run.run_id for run in gone), kept.run_id, young.run_id}
    assert [run.run_id for run in store.collect_garbage(CUTOFF).deleted] == [
        run.run_id for run in gone
    ]


def test_more_runs_than_one_chunk_are_all_deleted(
    store: Store, old_run: Callable[..., RunInfo]
) -> None:
    old = [old_run(days=10 + n / 100) for n in range(230)]
    young = old_run(days=-1)

    done = store.collect_garbage(CUTOFF)

    assert len(done.deleted) == len(old)
    assert stored_ids(store) == {young.run_id}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90d", 90 * DAY), ("12h", 43_200), ("2w", 14 * DAY), ("30m", 1800), ("1.5D", 1.5 * DAY)],
)
def test_ages_are_a_number_and_a_unit(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["90", "d", "-3d", "0d", "3 days", "1y", ""])
def test_a_bad_age_says_what_is_accepted(text: str) -> None:
    with pytest.raises(InputError, match=r"not an age; .*s, m, h, d or w") as raised:
        parse_age(text)
    assert raised.value.exit_code == 2
