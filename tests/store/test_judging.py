"""The judge's side of the store: calibrations the gate reads, the review queue, labels."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from sqlalchemy import delete

from seatrial.errors import InputError
from seatrial.store import Calibration, ReviewItem, Store, StoredLabel
from seatrial.store._schema import calibrations, labels, review_items


@pytest.fixture
def judging(store: Store) -> Iterator[Store]:
    """The store with no calibrations, review items or labels (PostgreSQL's is shared)."""
    with store.engine.begin() as connection:
        for table in (calibrations, review_items, labels):
            connection.execute(delete(table))
    yield store


def calibration(model: str = "judge-a", prompt_hash: str = "h1", **fields: object) -> Calibration:
    values: dict[str, object] = {
        "judge_model": model,
        "prompt_hash": prompt_hash,
        "prompt_version": "v1",
        "created_at": 1_763_000_000.0,
        "items": 120,
        "agreement": 0.9,
        "kappa": 0.78,
        "kappa_low": 0.66,
        "kappa_high": 0.88,
        "base_rate": 0.55,
        "report": {"items": 120, "confusion": {"labels": ["pass", "fail"], "counts": [[60, 6]]}},
    }
    values.update(fields)
    return Calibration.model_validate(values)


def item(run_id: str = "run-1", case_id: str = "refund", **fields: object) -> ReviewItem:
    values: dict[str, object] = {
        "run_id": run_id,
        "case_id": case_id,
        "attempt": 1,
        "assertion_id": "judge",
        "why": "warning",
        "judge_model": "judge-a",
        "judge_verdict": "WARNING",
        "judge_reason": "the reply promises a refund but no refund tool was called",
        "confidence": 0.55,
        "input": "我要退款，订单 A1001",
        "output": "已经帮您完成退款",
        "category": "退款",
        "created_at": 1_763_000_000.0,
    }
    values.update(fields)
    return ReviewItem.model_validate(values)


def test_the_gate_reads_the_newest_calibration_of_that_model_and_prompt(judging: Store) -> None:
    older = calibration(created_at=1_763_000_000.0, agreement=0.91)
    newer = calibration(created_at=1_763_000_100.0, agreement=0.8, kappa=None)
    judging.save_calibration(newer)
    judging.save_calibration(older)
    judging.save_calibration(calibration(prompt_hash="h2", created_at=1_763_000_200.0))
    judging.save_calibration(calibration(model="judge-b", created_at=1_763_000_300.0))

    assert judging.latest_calibration("judge-a", "h1") == newer
    assert judging.latest_calibration("judge-a", "h3") is None
    assert judging.latest_calibration("judge-c", "h1") is None


def test_calibrations_list_newest_first_with_their_full_report(judging: Store) -> None:
    first = calibration(created_at=1_763_000_000.0)
    second = calibration(prompt_hash="h2", created_at=1_763_000_100.0)
    other = calibration(model="judge-b", created_at=1_763_000_050.0)
    for made in (first, second, other):
        judging.save_calibration(made)

    assert judging.calibrations() == [second, other, first]
    assert judging.calibrations("judge-a") == [second, first]
    assert judging.calibrations("judge-a")[1].report["confusion"]["counts"] == [[60, 6]]
    assert judging.calibrations("nobody") == []


def test_queued_items_are_open_oldest_first_and_filter_by_run(judging: Store) -> None:
    late = item(created_at=1_763_000_100.0, why="low_confidence")
    early = item(case_id="booking", created_at=1_763_000_000.0, confidence=None)
    other_run = item(run_id="run-2", why="disagreement", created_at=1_763_000_050.0)
    judging.add_review_items([late, early, other_run])
    judging.add_review_items([])

    assert judging.review_items() == [early, other_run, late]
    assert judging.review_items(run_id="run-1") == [early, late]
    assert judging.review_items(status="labelled") == []
    assert judging.review_item(early.id[:8]) == early


def test_labelling_an_item_closes_it_and_stores_who_said_what(judging: Store) -> None:
    queued = item()
    judging.add_review_items([queued, item(case_id="booking")])

    labelled = judging.label_review_item(
        queued.id, "fail", "hallucination", "no refund was made", who="mia"
    )

    assert labelled.status == "labelled"
    assert (labelled.label, labelled.failure_type, labelled.who) == ("fail", "hallucination", "mia")
    assert labelled.labelled_at is not None
    assert [i.case_id for i in judging.review_items()] == ["booking"]
    assert judging.review_items(status="labelled") == [labelled]
    [stored] = judging.labels()
    assert stored.model_dump(exclude={"id", "labelled_at"}) == {
        "source": "review",
        "item_id": queued.id,
        "input": "我要退款，订单 A1001",
        "output": "已经帮您完成退款",
        "label": "fail",
        "category": "退款",
        "failure_type": "hallucination",
        "note": "no refund was made",
        "who": "mia",
    }
    assert stored.labelled_at == labelled.labelled_at


def test_labelling_an_item_again_replaces_its_label(judging: Store) -> None:
    queued = item()
    judging.add_review_items([queued])
    judging.label_review_item(queued.id, "fail", "hallucination", "", who="mia")
    judging.label_review_item(queued.id[:6], "pass", "ignored for a pass", "my mistake", who="li")

    [stored] = judging.labels(source="review")
    assert (stored.label, stored.failure_type, stored.note, stored.who) == (
        "pass",
        None,
        "my mistake",
        "li",
    )
    assert judging.review_item(queued.id).who == "li"


def test_labels_given_outside_the_queue_are_kept_apart_by_source(judging: Store) -> None:
    judging.add_labels(
        [
            StoredLabel(source="file:labels.jsonl", input="q", output="a", label="pass", who="x"),
        ]
    )
    queued = item()
    judging.add_review_items([queued])
    judging.label_review_item(queued.id, "pass", None, "", who="mia")

    assert [label.source for label in judging.labels()] == ["file:labels.jsonl", "review"]
    assert [label.item_id for label in judging.labels("review")] == [queued.id]


def test_labelling_an_unknown_item_says_how_to_find_the_ids(judging: Store) -> None:
    with pytest.raises(InputError, match="seatrial review --list"):
        judging.label_review_item("feedface", "pass", None, "", who="mia")
    assert judging.labels() == []


def test_an_ambiguous_prefix_or_a_bad_label_is_refused(judging: Store) -> None:
    judging.add_review_items([item(id="ab" + "0" * 30), item(id="ab" + "1" * 30)])
    with pytest.raises(InputError, match="more than one item"):
        judging.label_review_item("ab", "pass", None, "", who="mia")
    with pytest.raises(InputError, match="pass or fail"):
        judging.label_review_item("ab0", "maybe", None, "", who="mia")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="status"):
        judging.review_items(status="closed")
    assert judging.labels() == []


def test_the_store_keeps_calibrations_without_loading_the_judge() -> None:
    # The judge writes through the store; the store importing the judge back would tie the
    # two (and the gateway between them) into one knot that every store user loads.
    code = (
        "import sys, seatrial.store; "
        "from seatrial.store import Calibration; "
        "print(sorted(m for m in sys.modules "
        "if m.startswith(('seatrial.judge', 'seatrial.gateway'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
