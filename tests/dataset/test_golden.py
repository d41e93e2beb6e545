"""Golden sets as files and as requirements: import, export round trips, composition."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from seatrial.case import Case, load_suite
from seatrial.dataset import (
    ANTI_HALLUCINATION_MIN,
    composition,
    export_golden,
    import_golden,
    is_anti_hallucination,
    parse_dataset_ref,
)
from seatrial.errors import InputError
from seatrial.store import GoldenSnapshot, Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def case(case_id: str, **fields: Any) -> Case:
    values: dict[str, Any] = {"id": case_id, "input": "我要退款"}
    values.update(fields)
    return Case.model_validate(values)


def cases(total: int, **marks: int) -> list[Case]:
    """``total`` cases, the first ``p0`` P0, the first ``multi`` multi-turn, the first
    ``anti`` tagged anti-hallucination."""
    made = []
    for n in range(total):
        fields: dict[str, Any] = {"priority": "P0" if n < marks.get("p0", 0) else "P1"}
        if n < marks.get("multi", 0):
            fields.update(input=None, turns=["我要退款", "订单号 A1001"])
        if n < marks.get("anti", 0):
            fields["tags"] = ["anti-hallucination"]
        made.append(case(f"c{n}", **fields))
    return made


def checks(found: list[Any]) -> dict[str, str]:
    return {warning.check: warning.message for warning in found}


# --- composition -------------------------------------------------------------------------------


def test_a_set_meeting_every_requirement_has_no_warnings() -> None:
    assert composition(cases(20, p0=8, multi=10, anti=10)) == []


def test_shares_just_under_the_requirement_warn_with_their_figures() -> None:
    found = composition(cases(20, p0=7, multi=9, anti=9))

    assert checks(found) == {
        "p0_share": "P0 cases are 35% of the set (7 of 20); at least 40% should be P0",
        "multi_turn_share": "multi-turn cases are 45% of the set (9 of 20); at least 50% "
        "should be multi-turn",
        "anti_hallucination": checks(found)["anti_hallucination"],
    }
    assert checks(found)["anti_hallucination"].startswith("9 anti-hallucination cases; at least 10")
    assert {w.check: (w.actual, w.required) for w in found} == {
        "p0_share": (0.35, 0.4),
        "multi_turn_share": (0.45, 0.5),
        "anti_hallucination": (9, ANTI_HALLUCINATION_MIN),
    }


def test_an_empty_set_warns_rather_than_dividing_by_zero() -> None:
    assert set(checks(composition([]))) == {"p0_share", "multi_turn_share", "anti_hallucination"}


def test_expected_categories_without_active_cases_are_named() -> None:
    found = composition(
        [case("a", category="退款"), case("b", category="查单")],
        categories=["退款", "开票", "查单", "取消", ""],
    )

    assert [w.message for w in found if w.check == "empty_category"] == [
        "category '取消' has no active cases",
        "category '开票' has no active cases",
    ]


@pytest.mark.parametrize(
    "fields",
    [
        {"tags": ["anti-hallucination"]},
        {"tags": ["反幻觉"]},
        {"category": "防幻觉"},
        {"category": "Hallucination"},
        {"assertions": [{"type": "business_rule", "rule": "no_fabricated_ids"}]},
        {"assertions": [{"type": "factuality", "expected": "订单不存在"}]},
    ],
)
def test_anti_hallucination_cases_are_recognised_by_label_or_check(fields: dict[str, Any]) -> None:
    assert is_anti_hallucination(case("x", **fields))


@pytest.mark.parametrize(
    "fields",
    [
        {"tags": ["fabulous", "幻灯片"]},
        {"category": "退款"},
        {"assertions": [{"type": "business_rule", "rule": "no_pii_leak"}]},
        {"assertions": [{"type": "contains", "value": "订单不存在"}]},
    ],
)
def test_other_cases_are_not_counted_as_anti_hallucination(fields: dict[str, Any]) -> None:
    assert not is_anti_hallucination(case("x", **fields))


def test_dataset_refs_name_a_set_and_maybe_a_version() -> None:
    assert parse_dataset_ref("refunds") == ("refunds", None)
    assert parse_dataset_ref("退款@12") == ("退款", 12)
    for bad in ("@3", "refunds@", "refunds@v3", "refunds@0"):
        with pytest.raises(InputError):
            parse_dataset_ref(bad)


# --- import and export -------------------------------------------------------------------------


def write_suite(path: Path) -> Path:
    path.write_text(
        """
suite: refunds
defaults: {category: 退款, priority: P0}
cases:
  - id: refund-1
    input: 我要退款，订单 A1001
    tags: [售后]
    assertions:
      - {type: tool_called, expected: search_order}
      - {type: business_rule, rule: no_fabricated_ids, must_pass: true}
    limits: {tool_calls: 6}
  - id: refund-2
    turns: [我要退款, 订单号是 A1002, 对，就是那个]
    priority: P1
    context: {user: {vip: true}}
""",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml"])
def test_jsonl_and_yaml_exports_read_back_as_the_same_cases(
    store: Store, tmp_path: Path, suffix: str
) -> None:
    version = import_golden(store, "refunds", write_suite(tmp_path / "suite.yaml"), who="qa")
    snapshot = store.golden_snapshot("refunds", version)
    out = tmp_path / f"export{suffix}"

    assert export_golden(snapshot, out) == []

    again = import_golden(store, "refunds-again", out, who="qa")
    assert store.golden_snapshot("refunds-again", again).cases == snapshot.cases
    assert load_suite(out).name == "refunds"
    # Importing the same cases into the same set again changes nothing.
    assert import_golden(store, "refunds", out, who="qa") == version


def write_workbook(path: Path, rows: list[list[str]]) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    for row_cells in sheet.iter_rows():
        for cell in row_cells:
            if isinstance(cell.value, str) and cell.value.startswith("="):
                cell.data_type = "s"  # as Excel stores text typed with a leading '
    workbook.save(path)
    return path


def test_xlsx_import_export_import_gives_the_same_cases(store: Store, tmp_path: Path) -> None:
    source = write_workbook(
        tmp_path / "cases.xlsx",
        [
            [
                "ID",
                "Question",
                "Expected Task",
                "Expected Tool",
                "Expected Skill",
                "Expected Result",
                "Priority",
                "Tags",
                "Owner",
            ],
            [
                "book-1",
                "帮我约明天上午的清洁服务",
                "预约",
                "create_order, pay",
                "booking",
                "告知预约成功",
                "P0",
                "核心, 预约",
                "alice",
            ],
            ["book-2", "=1+1 是多少", "闲聊", "", "", "", "P2", "", ""],
        ],
    )
    first = store.golden_snapshot("booking", import_golden(store, "booking", source, who="qa"))
    out = tmp_path / "export.xlsx"

    assert export_golden(first, out) == []

    second = store.golden_snapshot("again", import_golden(store, "again", out, who="qa"))
    assert second.cases == first.cases
    assert second.cases[1].input == "=1+1 是多少"  # stays text, never becomes a formula
    assert second.cases[0].metadata["Owner"] == "alice"


def test_xlsx_export_refuses_cases_its_columns_cannot_hold_unless_lossy(
    store: Store, tmp_path: Path
) -> None:
    version = import_golden(store, "refunds", write_suite(tmp_path / "suite.yaml"), who="qa")
    snapshot = store.golden_snapshot("refunds", version)
    out = tmp_path / "export.xlsx"

    with pytest.raises(InputError, match=r"cannot hold 2 of the cases \(refund-1: .*assertions"):
        export_golden(snapshot, out)
    assert not out.exists()
    assert not list(tmp_path.glob("*.xlsx"))  # no half-written file left behind

    losses = export_golden(snapshot, out, lossy=True)
    assert [loss.split(":")[0] for loss in losses] == ["refund-1", "refund-2"]
    assert "turns" in losses[1] and "context" in losses[1]
    assert [c.id for c in load_suite(out).cases] == ["refund-1", "refund-2"]


def test_export_to_an_unknown_format_says_which_ones_work(tmp_path: Path) -> None:
    snapshot = GoldenSnapshot(dataset="refunds", version=1, cases=[case("a")])

    with pytest.raises(InputError, match=r"\.jsonl, \.yaml, \.yml, \.xlsx"):
        export_golden(snapshot, tmp_path / "cases.csv")
