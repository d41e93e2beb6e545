"""`seatrial judge calibrate`, end to end: a scripted judge model served on 127.0.0.1, called
through the gateway, measured against human labels, stored, and gating (or not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import accuracy_score

from seatrial.judge import calibration_alarm, meets_bar
from seatrial.store import Calibration, ReviewItem, Store
from seatrial.testing import FakeOpenAI
from tests.conftest import bundled_data

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
KEY_ENV = "SEATRIAL_TEST_JUDGE_KEY"
GOOD = ["退款已提交，单号 R-1", "已为您预约周五 10:00", "您可以托运两件行李", "订单已取消"]
BAD = ["已经帮您完成退款（没有调用工具）", "预约成功（其实没有空位）"]


def seatrial(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200", KEY_ENV: "k"},
    )


def project(folder: Path, upstream: FakeOpenAI, min_labels: int = 5) -> Path:
    (folder / "seatrial.yaml").write_text(
        "models:\n"
        "  judge-a:\n"
        "    model: judge-a-2025-01-01\n"
        f"    base_url: {upstream.base_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        "    max_retries: 0\n"
        "judge:\n"
        "  model: judge-a\n"
        "  max_retries: 0\n"
        "  min_agreement: 0.8\n"
        f"  min_labels: {min_labels}\n",
        encoding="utf-8",
    )
    return folder


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"] if m["role"] == "user")


def verdict_for(bad_replies: list[str]) -> Any:
    """A judge that says FAIL to the replies listed, PASS to any other."""

    def answer(body: dict[str, Any]) -> str:
        text = user_text(body)
        failed = any(reply in text for reply in bad_replies)
        return json.dumps(
            {
                "verdict": "FAIL" if failed else "PASS",
                "confidence": 0.9,
                "failure_type": "hallucination" if failed else None,
                "reason": "scripted",
            }
        )

    return answer


def pointwise_labels(path: Path) -> Path:
    rows = [(reply, "pass") for reply in GOOD] + [(reply, "fail") for reply in BAD]
    path.write_text(
        "".join(
            json.dumps({"input": "客户的请求", "output": reply, "label": label, "category": "客服"})
            + "\n"
            for reply, label in rows
        ),
        encoding="utf-8",
    )
    return path


def test_a_judge_agreeing_with_people_is_stored_and_gates(tmp_path: Path) -> None:
    # The judge misses one of the two bad replies: 5 of 6 items agree.
    with FakeOpenAI(verdict_for(BAD[:1])) as upstream:
        folder = project(tmp_path, upstream)
        labels = pointwise_labels(tmp_path / "labels.jsonl")
        done = seatrial("judge", "calibrate", "--labels", str(labels), cwd=folder)
        assert done.returncode == 0, done.stderr
        assert len(upstream.requests) == 6
        assert all(r.body["model"] == "judge-a-2025-01-01" for r in upstream.requests)

    assert "agreement   0.833" in done.stdout
    assert "calibrated: its FAIL verdicts fail runs" in done.stdout
    with Store.open(project_dir=folder) as store:
        [stored] = store.calibrations("judge-a")
        assert (stored.items, stored.agreement) == (6, pytest.approx(5 / 6))
        assert stored.report["confusion"]["counts"] == [[4, 0], [1, 1]]
        assert store.latest_calibration("judge-a", stored.prompt_hash) == stored
        assert store.spend_by_purpose().keys() == {"judge"}


def test_falling_below_the_bar_later_raises_an_alarm(tmp_path: Path) -> None:
    with FakeOpenAI(verdict_for(BAD)) as upstream:
        folder = project(tmp_path, upstream)
        labels = pointwise_labels(tmp_path / "labels.jsonl")
        first = seatrial("judge", "calibrate", "--labels", str(labels), cwd=folder)
        assert first.returncode == 0, first.stderr
        assert "ALARM" not in first.stderr
        # The same judge model now passes everything: 4 of 6, below 80%.
        upstream.script = verdict_for([])
        second = seatrial(
            "judge", "calibrate", "--labels", str(labels), "--format", "json", cwd=folder
        )
        assert second.returncode == 0, second.stderr

    assert "ALARM: judge judge-a" in second.stderr
    assert "100.0% of 6 items last time and on 66.7% of 6 items now" in " ".join(
        second.stderr.split()
    )
    result = json.loads(second.stdout)
    assert (result["gates"], result["agreement"]) == (False, pytest.approx(4 / 6))
    with Store.open(project_dir=folder) as store:
        assert [c.agreement for c in store.calibrations()] == pytest.approx([4 / 6, 1.0])


def test_the_review_queues_labels_calibrate_the_judge(tmp_path: Path) -> None:
    with Store.open(project_dir=tmp_path) as store:
        items = [
            ReviewItem(
                run_id="run-1",
                case_id=f"case-{n}",
                attempt=1,
                assertion_id="judge",
                why="warning",
                judge_verdict="WARNING",
                input="客户的请求",
                output=reply,
                category="客服",
            )
            for n, reply in enumerate(GOOD[:2] + BAD)
        ]
        store.add_review_items(items)
        for item in items:
            verdict = "pass" if item.output in GOOD else "fail"
            store.label_review_item(item.id, verdict, None, "", who="mia")

    with FakeOpenAI(verdict_for(BAD)) as upstream:
        folder = project(tmp_path, upstream, min_labels=100)
        done = seatrial("judge", "calibrate", "--labels", "queue", cwd=folder)
        assert done.returncode == 0, done.stderr
        assert len(upstream.requests) == 4

    assert "agreement   1.000" in done.stdout
    assert "not calibrated" in done.stdout and "at least 100 items" in done.stdout


def test_an_empty_queue_says_how_to_get_labels(tmp_path: Path) -> None:
    with FakeOpenAI(verdict_for([])) as upstream:
        done = seatrial("judge", "calibrate", "--labels", "queue", cwd=project(tmp_path, upstream))
        assert upstream.requests == []
    assert done.returncode == 2
    assert "seatrial review" in done.stderr


def test_pairwise_calibration_on_llmbar_matches_an_independent_count(tmp_path: Path) -> None:
    dataset = json.loads(
        (bundled_data("llmbar") / "LLMBar_Natural.dataset.json").read_text(encoding="utf-8")
    )[:20]
    # A scripted judge that picks the human choice except on every fourth item.
    choice = {
        item["output_1"]: (item["label"] if n % 4 else 3 - item["label"])
        for n, item in enumerate(dataset)
    }
    predicted = [str(choice[item["output_1"]]) for item in dataset]
    expected = accuracy_score([str(item["label"]) for item in dataset], predicted)

    def answer(body: dict[str, Any]) -> str:
        text = user_text(body)
        better = next(c for o, c in choice.items() if f"Output 1:\n{o}\n" in text)
        return json.dumps({"better": better, "reason": "scripted"})

    labels = tmp_path / "llmbar.json"
    labels.write_text(json.dumps(dataset, ensure_ascii=False), encoding="utf-8")
    with FakeOpenAI(answer) as upstream:
        folder = project(tmp_path, upstream)
        done = seatrial(
            "judge", "calibrate", "--labels", str(labels), "--format", "json", cwd=folder
        )
        assert done.returncode == 0, done.stderr
        assert len(upstream.requests) == 20

    result = json.loads(done.stdout)
    assert result["items"] == 20
    assert result["agreement"] == pytest.approx(expected)
    assert result["report"]["kind"] == "pairwise"
    with Store.open(project_dir=folder) as store:
        [stored] = store.calibrations()
    # Pairwise items measure the comparison prompt, so they are keyed on its hash.
    assert stored.prompt_hash == result["prompt_hash"]


def calibration(agreement: float, items: int = 120) -> Calibration:
    return Calibration(
        judge_model="judge-a",
        prompt_hash="h",
        prompt_version="v1",
        created_at=1.0,
        items=items,
        agreement=agreement,
        kappa=None,
        base_rate=0.5,
    )


def test_the_bar_needs_both_agreement_and_enough_labels() -> None:
    assert meets_bar(calibration(0.85), 0.85, 100)
    assert not meets_bar(calibration(0.84), 0.85, 100)
    assert not meets_bar(calibration(0.99, items=99), 0.85, 100)
    assert not meets_bar(None, 0.85, 100)


def test_only_a_fall_below_the_bar_is_an_alarm() -> None:
    assert calibration_alarm(calibration(0.9), calibration(0.8), 0.85, 100) is not None
    assert calibration_alarm(calibration(0.9), calibration(0.86), 0.85, 100) is None
    assert calibration_alarm(calibration(0.8), calibration(0.7), 0.85, 100) is None
    assert calibration_alarm(None, calibration(0.7), 0.85, 100) is None


def test_calibrate_with_lang_zh_says_whether_the_judge_gates_in_chinese(tmp_path: Path) -> None:
    with FakeOpenAI(verdict_for(BAD[:1])) as upstream:
        folder = project(tmp_path, upstream)
        labels = pointwise_labels(tmp_path / "labels.jsonl")
        done = seatrial("judge", "calibrate", "--labels", str(labels), "--lang", "zh", cwd=folder)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("评审        judge-a") and "提示词" in lines[0]
    assert "一致率      0.833" in lines
    assert any(
        line.startswith("门禁        已校准：它判的失败（FAIL）会让运行失败（judge.min_agreement")
        for line in lines
    )
    assert "calibrated" not in done.stdout and "agreement   " not in done.stdout
