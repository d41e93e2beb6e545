"""Reading human labels and judgements from files, and pairing them item by item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seatrial.errors import InputError
from seatrial.judge import load_labels, load_predictions, match_judgements
from tests.conftest import shared_data


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def test_pointwise_labels_accept_pass_fail_booleans_and_digits(tmp_path):
    path = _jsonl(
        tmp_path / "labels.jsonl",
        [
            {"input": "退款", "output": "已退款", "label": "PASS", "category": "退款"},
            {"input": "q", "output": "a", "label": False},
            {"input": "q", "output": "a", "label": 1},
            {"input": "q", "output": "a", "label": "0"},
        ],
    )
    labels = load_labels(path)
    assert labels.kind == "pointwise"
    assert labels.positive_label == "pass"
    assert [item.label for item in labels.items] == ["pass", "fail", "pass", "fail"]
    assert labels.items[0].category == "退款"


def test_llmbar_dataset_reads_as_pairwise_labels_with_their_lines():
    path = shared_data("llmbar") / "LLMBar_Natural.dataset.json"
    labels = load_labels(path)
    raw = json.loads(path.read_text("utf-8"))
    assert labels.kind == "pairwise"
    assert [item.label for item in labels.items] == [str(r["label"]) for r in raw]
    lines = path.read_text("utf-8").splitlines()
    starts = [int(item.where.rsplit(":", 1)[1]) for item in labels.items]
    assert starts[0] == 2 and starts == sorted(set(starts))
    assert all(lines[start - 1].strip() == "{" for start in starts)


def test_llmbar_results_give_the_winner_or_inconsistent_when_order_changes_it():
    path = shared_data("llmbar") / "evaluators" / "LLMBar_Natural_GPT-4_Vanilla_NoRules.result.json"
    predictions = load_predictions(path, "pairwise")
    raw = json.loads(path.read_text("utf-8"))
    for judgement, record in zip(predictions.items, raw, strict=True):
        winners = {order["winner"] for run in record["results"] for order in run.values()}
        expected = winners.pop() if len(winners) == 1 else "inconsistent"
        assert judgement.label == expected


def test_unknown_label_names_file_line_and_the_fix(tmp_path):
    path = _jsonl(
        tmp_path / "labels.jsonl",
        [
            {"input": "q", "output": "a", "label": "pass"},
            {"input": "q", "output": "a", "label": "ok"},
        ],
    )
    with pytest.raises(InputError, match=r"labels\.jsonl:2: label 'ok'.*write pass or fail"):
        load_labels(path)


def test_broken_json_line_is_reported_with_its_line(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"label": "pass"}\n\n{"label": \n', "utf-8")
    with pytest.raises(InputError, match=r"predictions\.jsonl:3: not valid JSON"):
        load_predictions(path, "pointwise")


def test_mixed_pointwise_and_pairwise_labels_are_refused(tmp_path):
    path = _jsonl(
        tmp_path / "labels.jsonl",
        [
            {"input": "q", "output": "a", "label": "pass"},
            {"input": "q", "output_1": "a", "output_2": "b", "label": 2},
        ],
    )
    with pytest.raises(InputError, match=r"labels\.jsonl:2: a pairwise item"):
        load_labels(path)


def test_items_match_by_id_whatever_their_order(tmp_path):
    labels = load_labels(
        _jsonl(
            tmp_path / "labels.jsonl",
            [
                {"id": "a", "input": "q", "output": "x", "label": "pass"},
                {"id": "b", "input": "q", "output": "y", "label": "fail"},
            ],
        )
    )
    predictions = load_predictions(
        _jsonl(tmp_path / "p.jsonl", [{"id": "b", "label": "fail"}, {"id": "a", "label": "pass"}]),
        labels.kind,
    )
    pairs = match_judgements(predictions, labels)
    assert [(h.id, h.label, j.label) for h, j in pairs] == [
        ("a", "pass", "pass"),
        ("b", "fail", "fail"),
    ]


def test_missing_judgement_for_an_id_is_named(tmp_path):
    labels = load_labels(
        _jsonl(
            tmp_path / "labels.jsonl",
            [
                {"id": "a", "input": "q", "output": "x", "label": "pass"},
                {"id": "b", "input": "q", "output": "y", "label": "fail"},
            ],
        )
    )
    predictions = load_predictions(
        _jsonl(tmp_path / "p.jsonl", [{"id": "a", "label": 1}]), "pointwise"
    )
    with pytest.raises(InputError, match=r"labels\.jsonl:2: item 'b' has no judgement"):
        match_judgements(predictions, labels)


def test_length_mismatch_by_position_names_both_files(tmp_path):
    labels = load_labels(
        _jsonl(tmp_path / "labels.jsonl", [{"input": "q", "output": "x", "label": "pass"}] * 3)
    )
    predictions = load_predictions(
        _jsonl(tmp_path / "p.jsonl", [{"label": "pass"}] * 2), "pointwise"
    )
    with pytest.raises(InputError) as caught:
        match_judgements(predictions, labels)
    message = str(caught.value)
    assert "p.jsonl holds 2 judgements" in message and "labels.jsonl holds 3 labels" in message
