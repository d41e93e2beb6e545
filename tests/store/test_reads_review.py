"""The store's named queries over the review queue and labels, against SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from seatrial.store import (
    ReviewItem,
    Store,
    StoredLabel,
    label_counts,
    next_open_review_id,
    open_review_count,
    review_queue_page,
)


@pytest.fixture
def queue(store: Store) -> Iterator[Store]:
    """The store with an empty review queue and no labels (PostgreSQL's store is shared)."""
    with store.engine.begin() as connection:
        for table in ("review_items", "labels"):
            connection.exec_driver_sql(f"DELETE FROM {table}")
    yield store


def item(case_id: str, created_at: float, item_id: str | None = None) -> ReviewItem:
    fields: dict[str, object] = {
        "run_id": "run-1",
        "case_id": case_id,
        "attempt": 1,
        "assertion_id": "judge",
        "why": "warning",
        "judge_model": "judge-a",
        "judge_verdict": "WARNING",
        "judge_reason": "the reply promises a refund but no refund tool was called",
        "input": "我要退款，订单 A1001",
        "output": "已经帮您完成退款",
        "category": "退款",
        "created_at": created_at,
    }
    if item_id is not None:
        fields["id"] = item_id
    return ReviewItem.model_validate(fields)


def test_queue_pages_are_oldest_first_filtered_by_status_and_clamped(queue: Store) -> None:
    items = [item(f"case-{i}", 100.0 + i) for i in range(5)]
    queue.add_review_items(items[::-1])
    queue.label_review_item(items[1].id, "pass", None, "", who="mia")

    first = review_queue_page(queue, "open", 1, 2)
    assert (first.total, first.page, first.pages) == (4, 1, 2)
    assert [i.case_id for i in first.items] == ["case-0", "case-2"]
    second = review_queue_page(queue, "open", 2, 2)
    assert [i.case_id for i in second.items] == ["case-3", "case-4"]
    # Past the last page gives the last; before the first gives the first.
    assert review_queue_page(queue, "open", 9, 2).page == 2
    assert review_queue_page(queue, "open", 0, 2).items == first.items

    labelled = review_queue_page(queue, "labelled", 1, 10)
    assert [(i.case_id, i.status, i.label) for i in labelled.items] == [
        ("case-1", "labelled", "pass")
    ]
    every = review_queue_page(queue, None, 1, 10)
    assert [i.case_id for i in every.items] == [f"case-{i}" for i in range(5)]


def test_an_empty_queue_is_one_empty_page(queue: Store) -> None:
    found = review_queue_page(queue, "open", 3, 10)
    assert (found.total, found.page, found.pages, found.items) == (0, 1, 1, [])


def test_next_open_item_skips_labelled_ones_and_breaks_time_ties_by_id(queue: Store) -> None:
    first = item("a", 100.0, "aaaa0001")
    twin = item("b", 100.0, "aaaa0002")
    labelled = item("c", 101.0, "aaaa0003")
    last = item("d", 102.0, "aaaa0004")
    queue.add_review_items([last, labelled, twin, first])
    queue.label_review_item(labelled.id, "fail", "hallucination", "", who="mia")
    assert next_open_review_id(queue, first) == twin.id
    assert next_open_review_id(queue, twin) == last.id
    assert next_open_review_id(queue, last) is None


def test_open_items_and_labels_per_source_are_counted(queue: Store) -> None:
    assert open_review_count(queue) == 0 and label_counts(queue) == {}
    items = [item(f"case-{i}", 100.0 + i) for i in range(3)]
    queue.add_review_items(items)
    queue.label_review_item(items[0].id, "pass", None, "", who="mia")
    queue.add_labels(
        [
            StoredLabel(
                source="import", input="q", output="a", label="fail", category="退款", who="li"
            )
        ]
    )
    assert open_review_count(queue) == 2
    assert label_counts(queue) == {"review": 1, "import": 1}
