"""Golden sets in the store: append-only versions, concurrent writers, pending cases."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import delete, insert, select

from seatrial.case import Case
from seatrial.errors import InputError
from seatrial.store import PendingCase, Store
from seatrial.store._schema import golden_changes, golden_versions, pending_cases


@pytest.fixture
def golden(store: Store) -> Iterator[Store]:
    """The store with no golden sets or pending cases (PostgreSQL's is shared)."""
    with store.engine.begin() as connection:
        for table in (pending_cases, golden_changes, golden_versions):
            connection.execute(delete(table))
    yield store


def case(case_id: str, text: str = "我要退款", **fields: object) -> Case:
    return Case.model_validate({"id": case_id, "input": text, **fields})


def pending(case_id: str, dataset: str = "refunds", **fields: object) -> PendingCase:
    values: dict[str, object] = {
        "dataset": dataset,
        "case": case(case_id, f"变体 {case_id}"),
        "origin": "expand",
        "kind": "colloquial",
        "parent_case_id": "refund-1",
        "model": "writer",
    }
    values.update(fields)
    return PendingCase.model_validate(values)


def golden_rows(store: Store) -> list[tuple[object, ...]]:
    with store.engine.connect() as connection:
        changes = connection.execute(
            select(golden_changes).order_by(golden_changes.c.version, golden_changes.c.position)
        ).all()
        versions = connection.execute(
            select(golden_versions).order_by(golden_versions.c.version)
        ).all()
    return [tuple(row) for row in [*versions, *changes]]


def test_an_edit_is_a_new_version_and_the_old_version_still_reads_the_old_definition(
    golden: Store,
) -> None:
    first = golden.golden_append(
        "refunds", add=[case("refund-1", category="退款"), case("refund-2")], who="qa"
    )
    rows_before = golden_rows(golden)
    second = golden.golden_append(
        "refunds", add=[case("refund-1", "我要退货退款", category="退款")], who="qa", note="edit"
    )

    assert (first, second) == (1, 2)
    old, new = golden.golden_snapshot("refunds", 1), golden.golden_snapshot("refunds")
    assert [c.input for c in old.cases] == ["我要退款", "我要退款"]
    assert [c.input for c in new.cases] == ["我要退货退款", "我要退款"]  # the edit kept its place
    assert new.version == 2 and new.ref == "refunds@2"
    # Append-only: every row written for v1 is still there, unchanged.
    rows_after = golden_rows(golden)
    assert all(row in rows_after for row in rows_before)
    assert len(rows_after) == len(rows_before) + 2
    assert [
        (v.version, v.added, v.retired, v.cases, v.note) for v in golden.golden_versions("refunds")
    ] == [(1, 2, 0, 2, ""), (2, 1, 0, 2, "edit")]


def test_adding_a_case_identical_to_the_active_one_writes_no_version(golden: Store) -> None:
    golden.golden_append("refunds", add=[case("refund-1")], who="qa")

    assert golden.golden_append("refunds", add=[case("refund-1")], who="qa") == 1
    assert golden.golden_append("refunds", add=[case("refund-1", "改了")], who="qa") == 2
    assert len(golden.golden_versions("refunds")) == 2


def test_retiring_needs_a_reason_and_leaves_earlier_versions_as_they_were(golden: Store) -> None:
    golden.golden_append("refunds", add=[case("refund-1"), case("refund-2")], who="qa")

    with pytest.raises(InputError, match="why case 'refund-2' is retired"):
        golden.golden_append("refunds", retire={"refund-2": " "}, who="qa")
    with pytest.raises(InputError, match="no active case 'refund-9'"):
        golden.golden_append("refunds", retire={"refund-9": "duplicate"}, who="qa")
    version = golden.golden_append("refunds", retire={"refund-2": "duplicate of 1"}, who="lead")

    now, before = golden.golden_snapshot("refunds"), golden.golden_snapshot("refunds", 1)
    assert version == 2
    assert [c.id for c in now.cases] == ["refund-1"]
    assert now.retired == {"refund-2": "duplicate of 1"}
    assert [c.id for c in before.cases] == ["refund-1", "refund-2"] and before.retired == {}
    # Retired cases may come back, as a new version.
    golden.golden_append("refunds", add=[case("refund-2")], who="qa")
    assert [c.id for c in golden.golden_snapshot("refunds").cases] == ["refund-1", "refund-2"]


def test_unknown_sets_and_versions_are_input_errors_that_say_what_exists(golden: Store) -> None:
    golden.golden_append("refunds", add=[case("refund-1")], who="qa")

    with pytest.raises(InputError, match=r"no golden set 'orders'.*known: refunds"):
        golden.golden_snapshot("orders")
    with pytest.raises(InputError, match="versions 1 to 1, not 2"):
        golden.golden_snapshot("refunds", 2)
    with pytest.raises(InputError, match="not a golden set name"):
        golden.golden_append("refunds@2", add=[case("x")], who="qa")
    with pytest.raises(InputError, match="say who"):
        golden.golden_append("refunds", add=[case("x")], who="")
    assert golden.golden_names() == ["refunds"]
    assert golden.golden_versions("orders") == []


def test_a_writer_that_finds_its_version_taken_writes_the_next_one(golden: Store) -> None:
    golden.golden_append("refunds", add=[case("refund-1")], who="qa")
    # Another writer holds version 2 in an open transaction; ours must wait, then take 3.
    holder = golden.engine.connect()
    transaction = holder.begin()
    holder.execute(
        insert(golden_versions),
        [
            {
                "dataset": "refunds",
                "version": 2,
                "created_at": 0.0,
                "who": "other",
                "note": "",
                "added": 0,
                "retired": 0,
                "cases": 1,
            }
        ],
    )
    result: list[int] = []
    writer = threading.Thread(
        target=lambda: result.append(
            golden.golden_append("refunds", add=[case("refund-2")], who="qa")
        )
    )
    writer.start()
    writer.join(timeout=0.5)
    transaction.commit()
    holder.close()
    writer.join(timeout=60)

    assert result == [3]
    assert [v.version for v in golden.golden_versions("refunds")] == [1, 2, 3]
    assert [c.id for c in golden.golden_snapshot("refunds").cases] == ["refund-1", "refund-2"]


def test_two_writers_appending_at_once_never_share_a_version(golden: Store, db_url: str) -> None:
    per_writer = 6
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def write(prefix: str) -> None:
        with Store.open(db_url) as own:
            start.wait()
            try:
                for n in range(per_writer):
                    own.golden_append("refunds", add=[case(f"{prefix}-{n}")], who=prefix)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

    writers = [threading.Thread(target=write, args=(name,)) for name in ("a", "b")]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join(timeout=120)

    assert errors == []
    versions = golden.golden_versions("refunds")
    assert [v.version for v in versions] == list(range(1, 2 * per_writer + 1))
    assert [v.cases for v in versions] == list(range(1, 2 * per_writer + 1))
    assert len(golden.golden_snapshot("refunds").cases) == 2 * per_writer


def test_approving_pending_cases_writes_one_version_holding_them(golden: Store) -> None:
    golden.golden_append("refunds", add=[case("refund-1")], who="qa")
    items = [pending("refund-1-v1"), pending("refund-1-v2"), pending("refund-1-v3")]
    golden.add_pending(items)

    assert [p.id for p in golden.pending_cases()] == [p.id for p in items]
    assert [c.id for c in golden.golden_snapshot("refunds").cases] == ["refund-1"]
    version = golden.approve_pending([items[0].id, items[2].id], who="lead", note="good ones")

    assert version == 2
    assert [c.id for c in golden.golden_snapshot("refunds").cases] == [
        "refund-1",
        "refund-1-v1",
        "refund-1-v3",
    ]
    approved = golden.pending_case(items[0].id)
    assert (approved.status, approved.version, approved.decided_by) == ("approved", 2, "lead")
    assert approved.case == items[0].case and approved.parent_case_id == "refund-1"
    assert [p.id for p in golden.pending_cases()] == [items[1].id]
    assert golden.golden_versions("refunds")[-1].note == "good ones"


def test_approving_an_already_decided_case_is_an_input_error_naming_it(golden: Store) -> None:
    items = [pending("v1"), pending("v2")]
    golden.add_pending(items)
    golden.approve_pending([items[0].id], who="lead")
    golden.reject_pending([items[1].id], who="lead", reason="says the same as v1")

    with pytest.raises(InputError, match=rf"already decided: {items[0].id} \(approved\)"):
        golden.approve_pending([items[0].id], who="lead")
    with pytest.raises(InputError, match=rf"{items[1].id} \(rejected\)"):
        golden.approve_pending([items[1].id], who="lead")
    with pytest.raises(InputError, match="no pending case nope"):
        golden.approve_pending(["nope"], who="lead")
    assert golden.pending_case(items[1].id).note == "says the same as v1"
    assert len(golden.golden_versions("refunds")) == 1


def test_a_failed_approval_changes_nothing(golden: Store) -> None:
    golden.golden_append("refunds", add=[case("refund-1")], who="qa")
    clash, fine = pending("refund-1"), pending("refund-1-v1")
    golden.add_pending([clash, fine])

    with pytest.raises(InputError, match="already has active cases with the ids refund-1"):
        golden.approve_pending([fine.id, clash.id], who="lead")

    assert len(golden.golden_versions("refunds")) == 1
    assert {p.status for p in golden.pending_cases(status=None)} == {"pending"}


def test_approval_needs_one_golden_set(golden: Store) -> None:
    a, b, loose = pending("a-1", "refunds"), pending("b-1", "orders"), pending("c-1", "")
    golden.add_pending([a, b, loose])

    with pytest.raises(InputError, match="say which one"):
        golden.approve_pending([a.id, b.id], who="lead")
    with pytest.raises(InputError, match="say which one"):
        golden.approve_pending([loose.id], who="lead")
    assert golden.approve_pending([loose.id, b.id], who="lead", dataset="orders") == 1
    assert [c.id for c in golden.golden_snapshot("orders").cases] == ["c-1", "b-1"]
    assert golden.pending_case(loose.id).dataset == "orders"
    assert [p.id for p in golden.pending_cases(dataset="refunds")] == [a.id]
    with pytest.raises(InputError, match="status is one of"):
        golden.pending_cases(status="open")


def test_categories_of_every_version_are_remembered(golden: Store) -> None:
    golden.golden_append(
        "refunds", add=[case("a", category="退款"), case("b", category="查单")], who="qa"
    )
    golden.golden_append("refunds", retire={"b": "moved"}, who="qa")
    golden.golden_append("refunds", add=[case("c", category="开票")], who="qa")

    assert golden.golden_categories("refunds") == sorted(["退款", "查单", "开票"])
    assert golden.golden_categories("refunds", version=2) == sorted(["退款", "查单"])


# The approval rules live in approve_pending alone: a caller that checks nothing (a script,
# the JSON API) cannot approve what must not be approved, and a refused approval writes nothing.


def from_trace(case_id: str = "trace-1", dataset: str = "") -> PendingCase:
    proposals = [
        {"assertion": {"id": "called", "type": "tool_called", "expected": "lookup"}, "keep": True},
        {"assertion": {"id": "few", "type": "limits", "tool_calls": 5}, "keep": False},
    ]
    kept = [proposals[0]["assertion"]]
    return PendingCase(
        dataset=dataset,
        case=case(case_id, assertions=kept),
        origin="trace",
        kind="from_trace",
        proposals=proposals,
    )


@pytest.mark.parametrize("who", ["", "   "])
def test_nobody_named_cannot_approve(golden: Store, who: str) -> None:
    item = pending("refund-1-v1")
    golden.add_pending([item])
    with pytest.raises(InputError, match="say who approves"):
        golden.approve_pending([item.id], who=who)
    assert golden.pending_case(item.id).status == "pending"
    assert golden.golden_names() == []


def test_a_changed_choice_of_proposals_is_approved_as_a_replacement_in_one_step(
    golden: Store,
) -> None:
    item = from_trace()
    golden.add_pending([item])

    version = golden.approve_pending([item.id], who="lead", dataset="refunds", kept={item.id: {1}})

    [approved] = golden.golden_snapshot("refunds", version).cases
    assert [a.id for a in approved.assertions] == ["few"]
    original = golden.pending_case(item.id)
    assert original.status == "rejected" and original.note.startswith("replaced by ")
    replacement = golden.pending_case(original.note.split()[2].rstrip(":"))
    assert (replacement.status, replacement.version, replacement.dataset) == (
        "approved",
        version,
        "refunds",
    )
    assert [p["keep"] for p in replacement.proposals] == [False, True]


def test_the_proposals_kept_as_proposed_approve_the_case_itself(golden: Store) -> None:
    item = from_trace()
    golden.add_pending([item])
    golden.approve_pending([item.id], who="lead", dataset="refunds", kept={item.id: {0}})
    assert golden.pending_case(item.id).status == "approved"
    assert len(golden.pending_cases(status=None)) == 1


@pytest.mark.parametrize(
    "refusal",
    ["id already active", "no golden set", "already decided"],
)
def test_a_refused_approval_with_a_changed_choice_writes_nothing(
    golden: Store, refusal: str
) -> None:
    golden.golden_append("refunds", add=[case("trace-1")], who="qa")
    item, other = from_trace(), pending("refund-2")
    golden.add_pending([item, other])
    ids, dataset = [item.id], "refunds"
    if refusal == "no golden set":
        item_elsewhere = from_trace("trace-2")
        golden.add_pending([item_elsewhere])
        ids, dataset = [item_elsewhere.id], None
        item = item_elsewhere
    elif refusal == "already decided":
        golden.reject_pending([other.id], who="lead", reason="duplicate")
        item = from_trace("trace-3")
        golden.add_pending([item])
        ids = [item.id, other.id]
    before = golden_rows(golden), pending_rows(golden)

    with pytest.raises(InputError):
        golden.approve_pending(ids, who="lead", dataset=dataset, kept={item.id: {1}})

    assert (golden_rows(golden), pending_rows(golden)) == before
    assert golden.pending_case(item.id).status == "pending"


def pending_rows(store: Store) -> list[tuple[object, ...]]:
    return sorted((p.id, p.status, p.note, p.version) for p in store.pending_cases(status=None))
