"""The dashboard's screenshots in docs/dashboard.md: the run, attempt, trace and compare pages
in English and in Chinese, each a 1280x800 PNG small enough for a page of docs, each shown.

test_browser_languages.py takes them (``SEATRIAL_DOC_SCREENSHOTS=1`` writes them here).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs"
PAGE = DOCS / "dashboard.md"
LARGEST = 200_000
"""Bytes a screenshot may take."""
PNG = b"\x89PNG\r\n\x1a\n"

NAMES = [
    f"dashboard-{page}-{lang}.png"
    for page in ("run", "case", "trace", "compare")
    for lang in ("en", "zh")
]


def size_of(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header chunk (IHDR, first after the signature)."""
    assert png.startswith(PNG) and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


@pytest.mark.parametrize("name", NAMES)
def test_each_screenshot_is_a_small_1280_by_800_png_the_page_shows(name: str) -> None:
    png = (DOCS / "img" / name).read_bytes()
    assert size_of(png) == (1280, 800)
    assert len(png) < LARGEST, f"{name} is {len(png)} bytes"
    assert f"(img/{name})" in PAGE.read_text(encoding="utf-8")


def test_a_png_header_that_is_not_one_is_refused() -> None:
    with pytest.raises(AssertionError):
        size_of(b"GIF89a" + bytes(30))
