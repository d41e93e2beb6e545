"""side_effect (alias final_state) and expected_files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from seatrial.assertion import lookup

from ._traces import check, context

STATE = {
    "order_created": {"status": "pending", "service_type": "清洁服务", "id": "ORD1"},
    "orders": [{"id": "ORD0", "status": "done"}, {"id": "ORD1", "status": "pending"}],
    "notified": True,
}


def test_an_order_created_with_the_expected_fields_passes():
    ctx = context(final_state=STATE)
    result = check(
        "side_effect",
        ctx,
        check="order_created",
        expected={"status": "pending", "service_type": "清洁服务"},
    )
    assert result.verdict == "pass"


def test_a_different_value_names_the_field():
    ctx = context(final_state=STATE)
    result = check("side_effect", ctx, check="order_created", expected={"status": "confirmed"})
    assert result.verdict == "fail"
    assert result.reason == (
        'final_state.order_created: `status`: expected "confirmed", got "pending"'
    )


def test_missing_state_lists_the_keys_that_exist():
    result = check("side_effect", context(final_state=STATE), check="refund_created")
    assert result.verdict == "fail"
    assert "does not exist (final state keys: order_created, orders, notified)" in result.reason


def test_a_mapping_against_a_list_needs_one_matching_item():
    ctx = context(final_state=STATE)
    ok = check("side_effect", ctx, path="orders", expected={"id": "ORD1", "status": "pending"})
    bad = check("side_effect", ctx, path="orders", expected={"id": "ORD9"})
    assert ok.verdict == "pass"
    assert bad.verdict == "fail" and "no item of final_state.orders" in bad.reason


def test_dotted_paths_reach_list_items():
    ctx = context(final_state=STATE)
    assert check("side_effect", ctx, path="orders.1.status", equals="pending").verdict == "pass"
    assert check("side_effect", ctx, path="orders.5.status").verdict == "fail"


def test_equals_contains_matches_and_exists():
    ctx = context(final_state=STATE)
    assert check("side_effect", ctx, path="notified", equals=True).verdict == "pass"
    assert check("side_effect", ctx, path="notified", equals=1).verdict == "fail"
    assert check("side_effect", ctx, path="order_created", contains="id").verdict == "pass"
    assert check("side_effect", ctx, path="order_created.id", matches="^ORD\\d+$").verdict == "pass"
    assert check("side_effect", ctx, path="refund", exists=False).verdict == "pass"
    exists = check("side_effect", ctx, path="notified", exists=False)
    assert exists.verdict == "fail" and "exists (true) but should not" in exists.reason


def test_no_final_state_is_not_evaluated():
    result = check("side_effect", context(), check="order_created")
    assert result.verdict == "not_evaluated"
    assert "reported no final state" in result.reason


def test_final_state_is_an_alias_of_side_effect():
    assert lookup("final_state") is lookup("side_effect")


def test_file_content_checks(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Index\n- README.md\n", encoding="utf-8")
    (tmp_path / "out.json").write_text(json.dumps({"count": 2, "files": ["a"]}), encoding="utf-8")
    ctx = context(workspace=tmp_path)
    assert check("side_effect", ctx, file="docs/index.md", contains="README.md").verdict == "pass"
    assert check("side_effect", ctx, file="docs/index.md", matches="^# Index").verdict == "pass"
    assert check("side_effect", ctx, file="out.json", expected={"count": 2}).verdict == "pass"
    wrong = check("side_effect", ctx, file="out.json", expected={"count": 3})
    assert wrong.verdict == "fail" and "`count`: expected 3, got 2" in wrong.reason
    gone = check("side_effect", ctx, file="missing.md")
    assert gone.verdict == "fail" and "does not exist" in gone.reason
    assert check("side_effect", ctx, file="missing.md", exists=False).verdict == "pass"


def test_file_without_workspace_is_not_evaluated():
    result = check("side_effect", context(), file="a.md")
    assert result.verdict == "not_evaluated"


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"check": "a", "file": "b"},
        {"file": "../etc/passwd"},
        {"file": "/etc/passwd"},
        {"check": "a", "equals": 1, "contains": 1},
        {"check": "a", "equals": 1, "exists": False},
        {"check": "a", "matches": "("},
    ],
)
def test_invalid_side_effect_parameters_are_rejected(params):
    with pytest.raises(ValidationError):
        check("side_effect", context(), **params)


def test_expected_files_lists_the_missing_ones(tmp_path: Path):
    (tmp_path / "README.md").write_text("hi", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text("d", encoding="utf-8")
    ctx = context(workspace=tmp_path)
    assert check("expected_files", ctx, expected=["README.md", "docs/design.md"]).verdict == "pass"
    assert check("expected_files", ctx, expected=["docs/*.md"]).verdict == "pass"
    result = check("expected_files", ctx, expected=["README.md", "CHANGELOG.md", "src/*.py"])
    assert result.verdict == "fail"
    assert result.reason == "missing from the workspace: CHANGELOG.md, src/*.py"


def test_expected_files_without_workspace_is_not_evaluated():
    result = check("expected_files", context(), expected=["README.md"])
    assert result.verdict == "not_evaluated" and "no workspace" in result.reason
