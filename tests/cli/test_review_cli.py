"""`seatrial review`, run as a user runs it: a real process reading answers from the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from seatrial.store import ReviewItem, Store
from tests.conftest import queued_items

SEATRIAL = str(Path(sys.executable).parent / "seatrial")


def seatrial(*args: str, cwd: Path, answers: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        input=answers,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200", "USER": "ci-user"},
    )


@pytest.fixture
def queue(tmp_path: Path) -> tuple[str, list[ReviewItem]]:
    """A store holding three open review items, oldest first."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    items = queued_items()
    with Store.open(url) as store:
        store.add_review_items(items)
    return url, items


def test_a_person_labels_items_in_the_terminal_and_quits(tmp_path, queue):
    url, items = queue
    answers = "f\nhallucination\nno refund was made\nmaybe\np\nlooks right\nq\n"
    done = seatrial("review", "--db", url, "--who", "mia", cwd=tmp_path, answers=answers)
    assert done.returncode == 0, done.stderr
    assert "已经帮您完成退款" in done.stdout
    assert "the reply says the refund is done; no refund tool ran" in done.stdout
    assert "judge judge-a: WARNING (confidence 0.50)" in done.stdout
    assert "answer p, f, s or q" in done.stdout
    assert "1 open item left" in done.stdout

    with Store.open(url) as store:
        assert [i.id for i in store.review_items()] == [items[2].id]
        labelled = {i.case_id: i for i in store.review_items(status="labelled")}
        assert (labelled["refund"].label, labelled["refund"].failure_type) == (
            "fail",
            "hallucination",
        )
        assert labelled["refund"].note == "no refund was made"
        assert (labelled["booking"].label, labelled["booking"].note) == ("pass", "looks right")
        assert {label.who for label in store.labels()} == {"mia"}


def test_skipping_leaves_an_item_open_and_who_defaults_to_the_user(tmp_path, queue):
    url, items = queue
    done = seatrial("review", "--db", url, "--run", "run-1", cwd=tmp_path, answers="s\np\n\n")
    assert done.returncode == 0, done.stderr
    assert "1 open item left" in done.stdout
    with Store.open(url) as store:
        [labelled] = store.review_items(status="labelled")
        assert (labelled.case_id, labelled.who) == ("booking", "ci-user")


def test_label_without_prompting_by_id_prefix(tmp_path, queue):
    url, items = queue
    done = seatrial(
        "review", "--db", url, "--label", items[2].id[:10], "FAIL",
        "--failure-type", "wrong_answer", "--note", "three pieces", "--who", "li",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"labelled {items[2].id} fail by li" in done.stdout
    with Store.open(url) as store:
        [label] = store.labels()
        assert (label.item_id, label.label, label.failure_type, label.note, label.who) == (
            items[2].id,
            "fail",
            "wrong_answer",
            "three pieces",
            "li",
        )


def test_list_shows_open_items_and_labels_nothing(tmp_path, queue):
    url, items = queue
    done = seatrial("review", "--db", url, "--list", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for item in items:
        assert item.id[:12] in done.stdout
    assert "low_confidence" in done.stdout and "disagreement" in done.stdout
    with Store.open(url) as store:
        assert len(store.review_items()) == 3


def test_an_empty_queue_says_so(tmp_path):
    done = seatrial("review", "--db", f"sqlite:///{tmp_path / 'empty.db'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the review queue is empty" in done.stdout


def test_wrong_labels_exit_2_with_what_to_do(tmp_path, queue):
    url, items = queue
    unknown = seatrial("review", "--db", url, "--label", "feedface", "pass", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "seatrial review --list" in unknown.stderr
    bad = seatrial("review", "--db", url, "--label", items[0].id, "perhaps", cwd=tmp_path)
    assert bad.returncode == 2
    assert "pass or fail" in bad.stderr
