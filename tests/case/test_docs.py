"""docs/cases.md documents every case field, every assertion key and every Excel column."""

from __future__ import annotations

from pathlib import Path

from seatrial.case import AssertionSpec, Case
from seatrial.case._xlsx import COLUMNS

DOC = (Path(__file__).parents[2] / "docs" / "cases.md").read_text(encoding="utf-8")


def test_every_case_field_has_a_row_in_the_field_table() -> None:
    missing = [name for name in Case.model_fields if f"| `{name}` |" not in DOC]
    assert missing == []


def test_every_common_assertion_key_is_documented() -> None:
    missing = [name for name in AssertionSpec.model_fields if f"| `{name}` |" not in DOC]
    assert missing == []


def test_every_excel_column_is_documented() -> None:
    missing = [title for title in COLUMNS.values() if f"| {title} |" not in DOC]
    assert missing == []


def test_the_assertion_reference_follows_the_case_fields() -> None:
    assert DOC.index("## Case fields") < DOC.index("## Assertion types") < DOC.index("### `")
