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

from tests.conftest import bundled_data

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


def _choices(results: Path) -> list[tuple[str, str]]:
    """GPT-4's choice per item with the outputs in their original order and swapped, as the
    result file records them (its last entry is the evaluator's final answer)."""
    return [
        (
            item["results"][-1]["swap = False"]["winner"],
            item["results"][-1]["swap = True"]["winner"],
        )
        for item in json.loads(results.read_text("utf-8"))
    ]


def _independent_figures(dataset: Path, results: Path) -> dict[str, float]:
    """Every figure the command prints, computed here from the two files: LLMBar's per-order
    figures by counting, agreement and kappa by scikit-learn (a choice that flips with the
    order is no choice)."""
    human = [str(item["label"]) for item in json.loads(dataset.read_text("utf-8"))]
    choices = _choices(results)
    n = len(human)
    original = sum(1 for h, (first, _) in zip(human, choices, strict=True) if h == first)
    swapped = sum(1 for h, (_, second) in zip(human, choices, strict=True) if h == second)
    both = sum(1 for h, (a, b) in zip(human, choices, strict=True) if h == a and h == b)
    same = sum(1 for a, b in choices if a == b)
    judge = [a if a == b else "inconsistent" for a, b in choices]
    return {
        "original": original / n,
        "swapped": swapped / n,
        "average": (original / n + swapped / n) / 2,
        "both": both / n,
        "positional": same / n,
        "agreement": accuracy_score(human, judge),
        "kappa": cohen_kappa_score(human, judge),
    }


def _printed_share(stdout: str, name: str) -> float:
    found = re.search(rf"^  {re.escape(name)}\s+(\d+\.\d)%", stdout, re.MULTILINE)
    assert found, f"{name!r} is not printed:\n{stdout}"
    return float(found.group(1)) / 100


@pytest.mark.parametrize("dataset_name", sorted(RESULTS))
def test_agreement_on_llmbar_gpt4_prints_llmbar_figures_computed_from_the_files(
    tmp_path, dataset_name
):
    folder = bundled_data("llmbar")
    dataset, results = folder / dataset_name, folder / "evaluators" / RESULTS[dataset_name]
    expected = _independent_figures(dataset, results)

    text = seatrial(
        "judge", "agreement", "--predictions", str(results), "--labels", str(dataset), cwd=tmp_path
    )
    assert text.returncode == 0, text.stderr
    printed = {
        "original": _printed_share(text.stdout, "accuracy, original order"),
        "swapped": _printed_share(text.stdout, "accuracy, swapped order"),
        "average": _printed_share(text.stdout, "average accuracy (Acc.)"),
        "both": _printed_share(text.stdout, "correct on both orders"),
        "positional": _printed_share(text.stdout, "positional agreement rate (Agr.)"),
    }
    for name, share in printed.items():
        assert share == pytest.approx(expected[name], abs=0.0005), name
    assert re.search(rf"agreement\s+{expected['agreement']:.3f}\b", text.stdout)
    assert re.search(rf"kappa\s+{expected['kappa']:.3f}\s+\(95% CI", text.stdout)

    as_json = seatrial(
        "judge", "agreement", "--predictions", str(results), "--labels", str(dataset),
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["agreement"] == pytest.approx(expected["agreement"])
    assert report["kappa"] == pytest.approx(expected["kappa"])
    assert report["kappa_interval"]["low"] <= report["kappa"] <= report["kappa_interval"]["high"]
    assert sum(map(sum, report["confusion"]["counts"])) == report["items"]
    positional = report["positional"]
    assert positional["original_order_accuracy"] == pytest.approx(expected["original"])
    assert positional["swapped_order_accuracy"] == pytest.approx(expected["swapped"])
    assert positional["average_accuracy"] == pytest.approx(expected["average"])
    assert positional["both_orders_accuracy"] == pytest.approx(expected["both"])
    assert positional["positional_agreement_rate"] == pytest.approx(expected["positional"])


# LLMBar's statistics.json for GPT-4 (Vanilla, no rules) beside each result file: correct_False,
# correct_True, correct_average, correct_both, equal.
PUBLISHED = {
    "Processed_MT-Bench.dataset.json": (0.795, 0.825, 0.81, 0.745, 0.87),
    "LLMBar_Natural.dataset.json": (0.92, 0.95, 0.935, 0.92, 0.97),
}


@pytest.mark.parametrize("dataset_name", sorted(PUBLISHED))
def test_gpt4_figures_computed_from_the_files_are_the_ones_llmbar_published(dataset_name):
    folder = bundled_data("llmbar")
    figures = _independent_figures(
        folder / dataset_name, folder / "evaluators" / RESULTS[dataset_name]
    )
    names = ("original", "swapped", "average", "both", "positional")
    assert tuple(figures[name] for name in names) == pytest.approx(PUBLISHED[dataset_name])


def test_pairwise_labels_judged_once_per_item_print_no_per_order_figures(tmp_path):
    folder = bundled_data("llmbar")
    dataset = folder / "LLMBar_Natural.dataset.json"
    choices = _choices(folder / "evaluators" / RESULTS["LLMBar_Natural.dataset.json"])
    predictions = tmp_path / "judge.jsonl"
    predictions.write_text("".join(json.dumps({"label": a}) + "\n" for a, _ in choices), "utf-8")
    text = seatrial(
        "judge", "agreement", "--predictions", str(predictions), "--labels", str(dataset),
        cwd=tmp_path,
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert "LLMBar's figures" not in text.stdout and "average accuracy" not in text.stdout
    human = [str(item["label"]) for item in json.loads(dataset.read_text("utf-8"))]
    accuracy = accuracy_score(human, [a for a, _ in choices])
    assert re.search(rf"^agreement\s+{accuracy:.3f}$", text.stdout, re.MULTILINE)


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
    # Pointwise labels keep the single agreement figure.
    assert re.search(r"^agreement\s+0\.667$", done.stdout, re.MULTILINE)
    assert "LLMBar's figures" not in done.stdout


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
    folder = bundled_data("llmbar")
    done = seatrial(
        "judge", "agreement",
        "--predictions", str(folder / "evaluators" / RESULTS["LLMBar_Natural.dataset.json"]),
        "--labels", str(folder / "Processed_MT-Bench.dataset.json"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "LLMBar_Natural_GPT-4_Vanilla_NoRules.result.json" in done.stderr
    assert "Processed_MT-Bench.dataset.json" in done.stderr


def test_agreement_with_lang_zh_prints_the_figures_in_chinese(tmp_path):
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
    args = ["judge", "agreement", "--predictions", str(predictions), "--labels", str(labels)]

    done = seatrial(*args, "--lang", "zh", cwd=tmp_path)
    as_json = seatrial(*args, "--lang", "zh", "--format", "json", cwd=tmp_path)
    english_json = seatrial(*args, "--format", "json", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "条数        3"
    assert "一致率      0.667" in lines
    assert any(line.startswith("kappa       ") and "置信区间" in line for line in lines)
    assert any(
        line.startswith("基准率      ") and "人工标注为 'pass' 的占比" in line for line in lines
    )
    # the tables wrap their titles to their width
    assert "混淆矩阵" in done.stdout and "按类别" in done.stdout
    assert re.search(r"退款\s+│\s+2\s+│\s+1\.000", done.stdout)
    for english in ("agreement", "base rate", "per category", "bootstrap"):
        assert english not in done.stdout
    assert json.loads(as_json.stdout) == json.loads(english_json.stdout)
