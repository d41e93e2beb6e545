"""Every registered assertion type and alias is documented, in English and in Chinese."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from seatrial.assertion import aliases, known_types

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = [DOCS / "cases.md", DOCS / "zh" / "cases.md"]


def documentation(page: Path) -> str:
    return page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=["en", "zh"])
def test_every_assertion_type_has_a_heading(page):
    headings = set(re.findall(r"^### `([^`]+)`\s*$", documentation(page), flags=re.MULTILINE))
    missing = [name for name in known_types() if name not in headings]
    assert not missing, f"document these assertion types in {page.relative_to(DOCS)}: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=["en", "zh"])
def test_every_alias_is_mentioned(page):
    text = documentation(page)
    missing = [alias for alias in aliases() if f"`{alias}`" not in text]
    assert not missing, f"mention these aliases in {page.relative_to(DOCS)}: {missing}"
