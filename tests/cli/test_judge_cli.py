"""`seatrial judge agreement`, run as a user runs it, against LLMBar's real files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from tests.conftest import shared_data

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
RESULTS = {
    "LLMBar_Natural.dataset.json": "LLMBar_Natural_GPT-4_Vanilla_NoRules.result.json",
    "Processed_MT-Bench.dataset.json": "Processed_MT-Bench_GPT-4_Vanilla_NoRules.result.json",
}


def seatrial(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def _independent_figures(dataset: Path, results: Path) -> tuple[float, float]:
    """GPT-4's choice per item from the result file (a winner that flips with the order is
    no choice), scored against the human labels by scikit-learn."""
    human = [str(item["label"]) for item in json.loads(dataset.read_text("utf-8"))]
    judge = []
    for item in json.loads(results.read_text("utf-8")):
        winners = [order["winner"] for run in item["results"] for order in run.values()]
        judge.append(winners[0] if len(set(winners)) == 1 else "inconsistent")
    return accuracy_score(human, judge), cohen_kappa_score(human, judge)


@pytest.mark.parametrize("dataset_name", sorted(RESULTS))
def test_agreement_on_llmbar_gpt4_matches_scikit_learn(tmp_path, dataset_name):
    folder = shared_data("llmbar")
    dataset, results = folder / dataset_name, folder / "evaluators" / RESULTS[dataset_name]
    accuracy, kappa = _independent_figures(dataset, results)

    text = seatrial(
        "judge", "agreement", "--predictions", str(results), "--labels", str(dataset), cwd=tmp_path
    )
    assert text.returncode == 0, text.stderr
    assert re.search(rf"agreement\s+{accuracy:.3f}\b", text.stdout)
    assert re.search(rf"kappa\s+{kappa:.3f}\s+\(95% CI", text.stdout)

    as_json = seatrial(
        "judge", "agreement", "--predictions", str(results), "--labels", str(dataset),
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["agreement"] == pytest.approx(accuracy)
    assert report["kappa"] == pytest.approx(kappa)
    assert report["kappa_interval"]["low"] <= report["kappa"] <= report["kappa_interval"]["high"]
    assert sum(map(sum, report["confusion"]["counts"])) == report["items"]


def test_pointwise_labels_print_per_category_figures(tmp_path):
    labels = tmp_path / "labels.jsonl"
    predictions = tmp_path / "predictions.jsonl"
    rows = [("退款", "pass", "pass"), ("退款", "fail", "fail"), ("预约", "pass", "fail")]
    labels.write_text(
        "".join(
            json.dumps({"input": "q", "output": "a", "label": h, "category": c}) + "\n"
            for c, h, _ in rows
        ),
        "utf-8",
    )
    predictions.write_text("".join(json.dumps({"label": j}) + "\n" for _, _, j in rows), "utf-8")
    done = seatrial(
        "judge", "agreement", "--predictions", str(predictions), "--labels", str(labels),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "per category" in done.stdout
    assert re.search(r"退款\s+│\s+2\s+│\s+1\.000", done.stdout)


def test_bad_label_exits_2_naming_file_and_line(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"input": "q", "output": "a", "label": "pass"}\n'
        '{"input": "q", "output": "a", "label": "maybe"}\n',
        "utf-8",
    )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"label": "pass"}\n{"label": "fail"}\n', "utf-8")
    done = seatrial(
        "judge", "agreement", "--predictions", str(predictions), "--labels", str(labels),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "labels.jsonl:2" in done.stderr and "maybe" in done.stderr


def test_length_mismatch_exits_2_naming_both_files(tmp_path):
    folder = shared_data("llmbar")
    done = seatrial(
        "judge", "agreement",
        "--predictions", str(folder / "evaluators" / RESULTS["LLMBar_Natural.dataset.json"]),
        "--labels", str(folder / "Processed_MT-Bench.dataset.json"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "LLMBar_Natural_GPT-4_Vanilla_NoRules.result.json" in done.stderr
    assert "Processed_MT-Bench.dataset.json" in done.stderr
