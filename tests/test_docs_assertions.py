"""Every registered assertion type and alias is documented."""

from __future__ import annotations

import re
from pathlib import Path

from seatrial.assertion import aliases, known_types

DOCS = Path(__file__).resolve().parents[1] / "docs"


def documentation() -> str:
    return (DOCS / "cases.md").read_text(encoding="utf-8")


def test_every_assertion_type_has_a_heading():
    headings = set(re.findall(r"^### `([^`]+)`\s*$", documentation(), flags=re.MULTILINE))
    missing = [name for name in known_types() if name not in headings]
    assert not missing, f"document these assertion types in docs/cases.md: {missing}"


def test_every_alias_is_mentioned():
    text = documentation()
    missing = [alias for alias in aliases() if f"`{alias}`" not in text]
    assert not missing, f"mention these aliases in docs/cases.md: {missing}"
