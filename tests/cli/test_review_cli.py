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


def test_with_lang_zh_the_terminal_review_speaks_chinese(tmp_path, queue):
    url, _ = queue
    answers = "maybe\np\nlooks right\nq\n"
    done = seatrial("review", "--db", url, "--who", "mia", "--lang", "zh", cwd=tmp_path,
                    answers=answers)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "第 1/3 条：" in done.stdout
    assert "评审 judge-a：警告（置信度 0.50）" in done.stdout
    assert "标注：p 通过，f 不通过，s 跳过，q 退出" in done.stdout
    assert "请输入 p、f、s 或 q" in done.stdout
    assert "复核队列中还剩 2 条待复核" in done.stdout
    # what the judge and the agent said is quoted as written
    assert "the reply says the refund is done; no refund tool ran" in done.stdout
    for english in ("answer p, f, s or q", "open items left", "(confidence"):
        assert english not in done.stdout


def test_list_and_label_in_chinese_and_an_empty_queue(tmp_path, queue):
    url, items = queue
    listed = seatrial("review", "--db", url, "--list", "--lang", "zh", cwd=tmp_path)
    labelled = seatrial("review", "--db", url, "--label", items[2].id, "fail", "--who", "li",
                        "--lang", "zh", cwd=tmp_path)  # fmt: skip
    empty = seatrial("review", "--db", f"sqlite:///{tmp_path / 'none.db'}", "--lang", "zh",
                     cwd=tmp_path)  # fmt: skip

    header = listed.stdout.splitlines()[0].replace("┃", " ").split()
    assert header == ["条目", "入队时间", "运行", "用例", "原因", "评审结论", "置信度", "类别"]
    assert f"已标注 {items[2].id}：不通过（li）" in labelled.stdout
    assert empty.stdout == "复核队列是空的：没有要标注的条目\n"
