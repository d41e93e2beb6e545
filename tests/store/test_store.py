"""The store's API, against SQLite and PostgreSQL alike."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.case import Case
from seatrial.errors import InputError, RunNotFound, StoreError
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.store import DB_URL_ENV, Store, listed_runs

MakeRun = Callable[..., RunInfo]
MakeAttempt = Callable[..., AttemptRecord]


def test_attempt_round_trips_with_its_trace(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    record = make_attempt(run.run_id)
    assert record.trace is not None and len(record.trace.tool_calls()) >= 3

    store.save_attempts([record])

    [stored] = store.attempts(run.run_id, with_traces=True)
    # The trace was read (tool_calls above) and the stored one was not: its view cache must not
    # take part in equality.
    assert stored == record
    assert stored.trace is not None
    assert [s.span_id for s in stored.trace.spans] == [s.span_id for s in record.trace.spans]
    assert stored.trace.tool_calls()[0].arguments == record.trace.tool_calls()[0].arguments
    assert stored.metrics == Metrics.of(stored.trace)


def test_attempts_without_traces_carry_everything_but_the_trace(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    record = make_attempt(run.run_id)
    store.save_attempts([record])

    [stored] = store.attempts(run.run_id)

    assert stored.trace is None
    assert stored == record.model_copy(update={"trace": None})


def test_attempt_without_a_trace_stays_without_one(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    crashed = make_attempt(
        run.run_id,
        verdict="ERROR",
        failure_type="agent_error",
        error="ConnectionRefusedError: agent down",
        trace=None,
        final_state=None,
        score=None,
    )
    store.save_attempts([crashed])

    assert store.attempts(run.run_id, with_traces=True) == [crashed]
    with pytest.raises(InputError, match="no trace"):
        store.attempt_trace(run.run_id, crashed.case_id, crashed.attempt)


def test_attempt_trace_gives_the_spans_in_stored_order(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    first, second = make_attempt(run.run_id, attempt=1), make_attempt(run.run_id, attempt=2)
    store.save_attempts([first, second])

    assert second.trace is not None
    assert store.attempt_trace(run.run_id, "book-flight", 2).model_dump() == (
        second.trace.model_dump()
    )
    with pytest.raises(InputError, match="no attempt 3 of case 'book-flight'"):
        store.attempt_trace(run.run_id, "book-flight", 3)
    with pytest.raises(RunNotFound):
        store.attempt_trace("no-such-run", "book-flight", 1)


def test_attempts_come_in_suite_order_then_by_attempt(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    written = [
        make_attempt(run.run_id, case_id=case_id, attempt=attempt)
        for case_id, attempt in [
            ("baggage", 2),
            ("book-flight", 2),
            ("baggage", 1),
            ("cancel", 1),
            ("book-flight", 1),
        ]
    ]
    store.save_attempts(written)

    order = [(a.case_id, a.attempt) for a in store.attempts(run.run_id)]
    assert order == [
        ("book-flight", 1),
        ("book-flight", 2),
        ("cancel", 1),
        ("baggage", 1),
        ("baggage", 2),
    ]
    only = store.attempts(run.run_id, case_id="baggage", with_traces=True)
    assert [(a.attempt, a.trace is not None) for a in only] == [(1, True), (2, True)]


def test_finished_attempts_are_what_a_resume_skips(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    assert store.finished_attempts(run.run_id) == set()

    store.save_attempts(
        [make_attempt(run.run_id, "book-flight", 1), make_attempt(run.run_id, "cancel", 2)]
    )
    store.save_attempts([make_attempt(run.run_id, "book-flight", 2)])

    assert store.finished_attempts(run.run_id) == {
        ("book-flight", 1),
        ("book-flight", 2),
        ("cancel", 2),
    }


def test_a_batch_with_a_refused_attempt_stores_none_of_the_batch(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    store.save_attempts([make_attempt(run.run_id, "cancel", 1)])

    batch = [make_attempt(run.run_id, "baggage", 1), make_attempt("never-created", "cancel", 1)]
    with pytest.raises(StoreError, match="none of this batch was stored") as raised:
        store.save_attempts(batch)

    assert len(str(raised.value)) < 1000  # the driver's words, not the batch's parameters
    assert store.finished_attempts(run.run_id) == {("cancel", 1)}
    assert len(store.attempts(run.run_id, with_traces=True)[0].trace.spans) > 0  # type: ignore[union-attr]


def test_a_value_that_is_not_json_is_a_store_error_naming_the_fix(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    with pytest.raises(StoreError, match="give final_state and span attributes JSON values"):
        store.save_attempts([make_attempt(run.run_id, final_state={"handle": object()})])
    assert store.finished_attempts(run.run_id) == set()


def test_attempts_of_a_run_never_created_are_refused(
    store: Store, make_attempt: MakeAttempt
) -> None:
    with pytest.raises(
        StoreError,
        match="none of this batch was stored; an attempt is stored "
        "once per .* must have been created first",
    ):
        store.save_attempts([make_attempt("ghost-run")])


def test_unknown_run_raises_run_not_found_with_exit_code_2(store: Store) -> None:
    for read in (store.get_run, store.run_cases, store.finished_attempts, store.attempts):
        with pytest.raises(RunNotFound, match="no run 'nope'") as raised:
            read("nope")
        assert raised.value.exit_code == 2
    with pytest.raises(RunNotFound):
        store.finish_run("nope", "finished", 1.0)


def test_run_cases_come_back_as_run_in_suite_order(
    store: Store, make_run: MakeRun, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    empty = make_run()
    store.create_run(empty, [])

    assert store.run_cases(run.run_id) == cases
    assert store.run_cases(empty.run_id) == []


def test_a_run_id_is_created_once(store: Store, make_run: MakeRun, cases: list[Case]) -> None:
    run = make_run()
    store.create_run(run, cases)
    with pytest.raises(StoreError, match="resume the run rather than create it again"):
        store.create_run(run, cases)


def test_finish_run_records_status_and_end_time(
    store: Store, make_run: MakeRun, cases: list[Case]
) -> None:
    run = make_run(tags=["nightly", "gpt-4o"])
    store.create_run(run, cases)
    assert store.get_run(run.run_id) == run

    store.finish_run(run.run_id, "interrupted", 1_763_000_123.5)

    assert store.get_run(run.run_id) == run.model_copy(
        update={"status": "interrupted", "finished_at": 1_763_000_123.5}
    )
    with pytest.raises(ValueError, match="run status"):
        store.finish_run(run.run_id, "done", 1.0)


def test_list_runs_is_newest_first_and_filters_by_suite_agent_and_tag(
    store: Store, make_run: MakeRun
) -> None:
    runs = [
        make_run("r1", suite="airline", agent="v1", tags=["nightly"], started_at=100.0),
        make_run("r2", suite="retail", agent="v1", tags=["pr"], started_at=200.0),
        make_run("r3", suite="airline", agent="v2", tags=["nightly", "gpt-4o"], started_at=300.0),
        make_run("r4", suite="airline", agent="v2", tags=[], started_at=400.0),
    ]
    for run in runs:
        store.create_run(run, [])

    def ids(**filters: object) -> list[str]:
        return [r.run_id for r in store.list_runs(**filters)]  # type: ignore[arg-type]

    assert ids() == ["r4", "r3", "r2", "r1"]
    assert store.list_runs() == runs[::-1]
    assert ids(limit=2) == ["r4", "r3"]
    assert ids(suite="airline") == ["r4", "r3", "r1"]
    assert ids(agent="v1") == ["r2", "r1"]
    assert ids(tag="nightly") == ["r3", "r1"]
    assert ids(suite="airline", agent="v2", tag="gpt-4o") == ["r3"]
    assert ids(tag="absent") == []


def test_the_runs_list_read_without_the_records_matches_the_stores_list(
    store: Store, db_url: str, make_run: MakeRun, make_attempt: MakeAttempt
) -> None:
    # `seatrial runs` reads the list with the tables alone (seatrial.store.listed_runs).
    runs = [
        make_run("r1", suite="airline", agent="v1", tags=["nightly"], started_at=100.0),
        make_run("r2", suite="retail", agent="v1", tags=["pr", "gpt-4o"], started_at=200.0),
    ]
    for run in runs:
        store.create_run(run, [])
    store.save_attempts(
        [
            make_attempt("r1", attempt=1),
            make_attempt("r1", attempt=2, verdict="PASS", failure_type=None),
        ]
    )

    listed = listed_runs(db_url, limit=None)
    assert [(r.run_id, r.suite, r.agent, r.status, r.tags) for r in listed] == [
        (r.run_id, r.suite, r.agent, r.status, r.tags) for r in store.list_runs(limit=None)
    ]
    assert [r.started_at for r in listed] == [200.0, 100.0]
    assert {r.run_id: r.verdicts for r in listed} == {"r1": {"FAIL": 1, "PASS": 1}, "r2": {}}
    assert [r.run_id for r in listed_runs(db_url, tag="nightly")] == ["r1"]
    assert [r.run_id for r in listed_runs(db_url, suite="retail", agent="v1")] == ["r2"]
    assert listed_runs(db_url, agent="v9") == []


def test_resolve_run_id_takes_full_ids_unique_prefixes_and_latest(
    store: Store, make_run: MakeRun
) -> None:
    with pytest.raises(RunNotFound, match="no runs yet"):
        store.resolve_run_id("latest")
    for run_id, started in [
        ("20251129-a1b2", 10.0),
        ("20251129-a1c3", 30.0),
        ("20251130-ffee", 20.0),
        ("Ab_%", 5.0),
    ]:
        store.create_run(make_run(run_id, started_at=started), [])

    assert store.resolve_run_id("20251130-ffee") == "20251130-ffee"
    assert store.resolve_run_id("20251130") == "20251130-ffee"
    assert store.resolve_run_id("20251129-a1c") == "20251129-a1c3"
    assert store.resolve_run_id("latest") == "20251129-a1c3"
    with pytest.raises(InputError, match="matches more than one run") as raised:
        store.resolve_run_id("20251129-a1")
    assert "20251129-a1b2" in str(raised.value) and "20251129-a1c3" in str(raised.value)
    with pytest.raises(RunNotFound):
        store.resolve_run_id("2026")
    # A prefix is text, not a pattern, and case counts.
    assert store.resolve_run_id("Ab_") == "Ab_%"
    with pytest.raises(RunNotFound):
        store.resolve_run_id("ab")
    with pytest.raises(RunNotFound):
        store.resolve_run_id("2025_")


def test_nul_in_agent_output_is_stored_as_a_replacement_character(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    record = make_attempt(
        run.run_id, response="binary\x00reply", final_state={"file": "PK\x03\x04\x00\x00"}
    )
    assert record.trace is not None
    record.trace.spans[-1].attributes["gen_ai.tool.call.result"] = "\x00\x01ELF"
    store.save_attempts([record])

    [stored] = store.attempts(run.run_id, with_traces=True)

    assert stored.response == "binary\ufffdreply"
    assert stored.final_state == {"file": "PK\x03\x04\ufffd\ufffd"}
    assert stored.trace is not None
    assert stored.trace.spans[-1].attributes["gen_ai.tool.call.result"] == "\ufffd\x01ELF"


def test_attempts_saved_by_a_writer_thread_are_read_by_another(
    store: Store, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    run = make_run()
    store.create_run(run, cases)
    batches = [[make_attempt(run.run_id, case.id, n) for case in cases] for n in (1, 2, 3)]
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for batch in batches:
                store.save_attempts(batch)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failures.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join()

    assert failures == []
    assert len(store.attempts(run.run_id, with_traces=True)) == 9


def test_default_store_is_a_file_in_the_project_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_run: MakeRun
) -> None:
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    run = make_run()
    with Store.open(project_dir=tmp_path) as store:
        store.create_run(run, [])
        assert store.url == f"sqlite:///{tmp_path.resolve() / '.seatrial' / 'seatrial.db'}"
    assert (tmp_path / ".seatrial" / "seatrial.db").is_file()
    with Store.open(project_dir=tmp_path) as store:
        assert store.resolve_run_id("latest") == run.run_id


def test_in_memory_store_is_one_database_for_every_thread(make_run: MakeRun) -> None:
    run = make_run()
    with Store.open("sqlite://") as store:
        writer = threading.Thread(target=store.create_run, args=(run, []))
        writer.start()
        writer.join()
        assert store.get_run(run.run_id) == run


def test_unreachable_database_names_the_fix_and_hides_the_password() -> None:
    with pytest.raises(StoreError) as raised:
        Store.open("postgresql://seatrial:s3cret-pw@127.0.0.1:1/seatrial?connect_timeout=3")
    text = str(raised.value)
    assert "s3cret-pw" not in text
    assert text.startswith("cannot connect to postgresql+psycopg://seatrial:***@127.0.0.1:1/")
    assert f"check --db or {DB_URL_ENV}" in text


def test_sqlite_file_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot create the folder"):
        Store.open(f"sqlite:///{blocker / 'sub' / 'seatrial.db'}")


def test_stores_opened_together_on_a_fresh_database_migrate_it_once(fresh_url: str) -> None:
    opened: list[Store] = []
    failures: list[BaseException] = []

    def open_store() -> None:
        try:
            opened.append(Store.open(fresh_url))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failures.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in opened:
        store.close()

    assert failures == []
    assert len(opened) == 4


def test_two_writers_on_one_sqlite_file_wait_for_each_other(
    tmp_path: Path, make_run: MakeRun, make_attempt: MakeAttempt, cases: list[Case]
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    runs = [make_run(), make_run()]
    failures: list[BaseException] = []
    with Store.open(url) as first, Store.open(url) as second:
        for store, run in zip((first, second), runs, strict=True):
            store.create_run(run, cases)

        def write(store: Store, run: RunInfo) -> None:
            try:
                for n in range(1, 6):
                    store.save_attempts([make_attempt(run.run_id, c.id, n) for c in cases])
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                failures.append(exc)

        writers = [
            threading.Thread(target=write, args=pair)
            for pair in zip((first, second), runs, strict=True)
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()

        assert failures == []
        assert all(len(first.finished_attempts(run.run_id)) == 15 for run in runs)


KILLED_WRITER = """
import os, signal, sys
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store
store = Store.open(sys.argv[1])
store.create_run(RunInfo(run_id="killed", suite="s", agent="a"), [])
for n in (1, 2, 3):
    store.save_attempts([AttemptRecord(run_id="killed", case_id="c", attempt=n, verdict="PASS")])
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_attempts_committed_before_a_kill_survive_it(db_url: str) -> None:
    process = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, db_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr
    with Store.open(db_url) as store:
        assert store.get_run("killed").status == "running"
        assert store.finished_attempts("killed") == {("c", 1), ("c", 2), ("c", 3)}


def test_verdict_counts_are_per_run_and_per_verdict(store, make_run, make_attempt, cases):
    first, second = make_run(), make_run()
    store.create_run(first, cases)
    store.create_run(second, cases)
    case_a, case_b = cases[0].id, cases[1].id
    store.save_attempts(
        [
            make_attempt(first.run_id, case_a, 1, verdict="PASS", failure_type=None),
            make_attempt(first.run_id, case_a, 2),
            make_attempt(first.run_id, case_b, 1, verdict="PASS", failure_type=None),
        ]
    )
    counts = store.verdict_counts([first.run_id, second.run_id])
    assert counts == {first.run_id: {"PASS": 2, "FAIL": 1}, second.run_id: {}}
