"""docs/cli.md is generated from the real command and must not drift from it."""

from __future__ import annotations

from pathlib import Path

from seatrial.cli._reference import render_reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_matches_the_command():
    assert DOC.read_text(encoding="utf-8") == render_reference(), (
        "docs/cli.md is out of date: run `python -m seatrial.cli._reference > docs/cli.md`"
    )


def test_every_command_is_documented():
    text = DOC.read_text(encoding="utf-8")
    for command in ("run", "validate", "runs", "report", "init", "demo"):
        assert f"## `seatrial {command}`" in text
