"""`--format`: every command refuses a format it does not write with the same message and
exit 2, before it opens a store."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from seatrial.cli import app


@pytest.mark.parametrize(
    ("command", "formats"),
    [
        (["drift", "latest"], "text, json"),
        (["cases", "stale"], "text, json"),
        (["compare", "latest", "latest"], "text, json, md"),
        (["bench", "--show", "b1"], "text, json, md"),
    ],
    ids=["drift", "cases-stale", "compare", "bench"],
)
def test_an_unknown_format_exits_2_naming_the_ones_the_command_writes(
    command: list[str], formats: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "never.db"
    result = CliRunner().invoke(app, [*command, "--format", "html", "--db", f"sqlite:///{db}"])
    assert result.exit_code == 2
    assert f"unknown format 'html': use one of {formats}" in " ".join(result.stderr.split())
    assert not db.exists()  # refused before any store was opened


def test_a_format_the_command_writes_passes_the_check(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app, ["cases", "stale", "--format", "json", "--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    )
    assert "unknown format" not in result.output
