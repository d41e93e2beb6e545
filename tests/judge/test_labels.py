"""Reading human labels and judgements from files, and pairing them item by item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seatrial.errors import InputError
from seatrial.judge import load_labels, load_predictions, match_judgements
from tests.conftest import bundled_data


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
    path = bundled_data("llmbar") / "LLMBar_Natural.dataset.json"
    labels = load_labels(path)
    raw = json.loads(path.read_text("utf-8"))
    assert labels.kind == "pairwise"
    assert [item.label for item in labels.items] == [str(r["label"]) for r in raw]
    lines = path.read_text("utf-8").splitlines()
    starts = [int(item.where.rsplit(":", 1)[1]) for item in labels.items]
    assert starts[0] == 2 and starts == sorted(set(starts))
    assert all(lines[start - 1].strip() == "{" for start in starts)


NATURAL_GPT4 = "evaluators/LLMBar_Natural_GPT-4_Vanilla_NoRules.result.json"


def test_llmbar_results_give_both_orders_and_inconsistent_when_order_changes_the_winner():
    path = bundled_data("llmbar") / NATURAL_GPT4
    predictions = load_predictions(path, "pairwise")
    raw = json.loads(path.read_text("utf-8"))
    flipped = 0
    for judgement, record in zip(predictions.items, raw, strict=True):
        original = record["results"][-1]["swap = False"]["winner"]
        swapped = record["results"][-1]["swap = True"]["winner"]
        assert judgement.orders == (original, swapped)
        assert judgement.label == (original if original == swapped else "inconsistent")
        flipped += original != swapped
    # The file holds items whose winner flips, so both branches above were exercised.
    assert 0 < flipped < len(raw)


def _llmbar_result(tmp_path: Path, results: list[object]) -> Path:
    path = tmp_path / "result.json"
    item = {"input": "q", "output_1": "a", "output_2": "b", "label": 1, "results": results}
    path.write_text(json.dumps([item]), "utf-8")
    return path


def test_llmbar_swap_evaluator_is_read_from_its_final_synthesised_answer(tmp_path):
    # Swap evaluators keep the first pass (which disagreed) before the synthesised answer;
    # like LLMBar's statistics, the judgement is the last entry.
    first_pass = {"swap = False": {"winner": "1"}, "swap = True": {"winner": "2"}}
    final = {"swap = False": {"winner": "1"}, "swap = True": {"winner": "1"}}
    [judgement] = load_predictions(_llmbar_result(tmp_path, [first_pass, final]), "pairwise").items
    assert judgement.label == "1" and judgement.orders == ("1", "1")


def test_llmbar_rating_evaluator_scores_beside_the_orders_are_ignored(tmp_path):
    rated = {
        "score_1": ["7", "stop"],
        "score_2": ["5", "stop"],
        "swap = False": {"winner": "1"},
        "swap = True": {"winner": "1"},
    }
    [judgement] = load_predictions(_llmbar_result(tmp_path, [rated]), "pairwise").items
    assert judgement.orders == ("1", "1")


def test_llmbar_unparsed_winner_reads_as_no_answer(tmp_path):
    run = {"swap = False": {"winner": None}, "swap = True": {"winner": "2"}}
    [judgement] = load_predictions(_llmbar_result(tmp_path, [run]), "pairwise").items
    assert judgement.orders == ("no answer", "2")
    assert judgement.label == "inconsistent"


def test_llmbar_result_without_the_swapped_order_names_file_line_and_key(tmp_path):
    path = _llmbar_result(tmp_path, [{"swap = False": {"winner": "1"}}])
    with pytest.raises(InputError, match=r"result\.json:1: .*no `swap = True` object"):
        load_predictions(path, "pairwise")


def test_judge_labels_one_per_item_carry_no_orders(tmp_path):
    path = _jsonl(tmp_path / "p.jsonl", [{"label": 1}, {"label": 2}])
    assert [j.orders for j in load_predictions(path, "pairwise").items] == [None, None]


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
