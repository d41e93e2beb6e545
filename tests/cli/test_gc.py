"""``seatrial gc``: old runs go, what is still needed stays, a bad age is refused (exit 2)."""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.record import RunInfo
from seatrial.store import Store

DAY = 86_400.0


def invoke(tmp_path: Path, *args: str) -> Result:
    db = f"sqlite:///{tmp_path / 'seatrial.db'}"
    return CliRunner(env={"COLUMNS": "220"}).invoke(app, ["gc", *args, "--db", db])


def store_runs(tmp_path: Path, *ages: tuple[str, float, list[str]]) -> None:
    """Finished runs of one suite and agent, named and aged in days, with their tags."""
    now = time.time()
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        for name, days, tags in ages:
            ended = now - days * DAY
            info = RunInfo(
                run_id=name,
                suite="support",
                agent="v2",
                status="finished",
                started_at=ended - 60,
                finished_at=ended,
                tags=tags,
            )
            store.create_run(info, [])


def stored(tmp_path: Path) -> set[str]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        return {info.run_id for info in store.list_runs(limit=None)}


def test_gc_deletes_old_runs_and_keeps_young_tagged_and_newest(tmp_path: Path) -> None:
    store_runs(
        tmp_path,
        ("old-plain", 120, []),
        ("old-replay", 110, ["replay"]),
        ("old-release", 100, ["release-1.4"]),
        ("almost-old", 89, []),
        ("today", 0, []),
    )

    result = invoke(tmp_path, "--older-than", "90d")

    assert result.exit_code == 0, result.output
    assert "deleted 2 runs" in result.output
    assert "old-plain" in result.output and "old-replay" in result.output
    assert "kept 1 old run: 1 tagged" in result.output
    assert stored(tmp_path) == {"old-release", "almost-old", "today"}


def test_gc_dry_run_lists_the_runs_and_deletes_nothing(tmp_path: Path) -> None:
    store_runs(tmp_path, ("three-weeks", 21, []), ("two-days", 2, []), ("now", 0, []))

    result = invoke(tmp_path, "--older-than", "2w", "--dry-run")

    assert result.exit_code == 0, result.output
    assert "would delete 1 run that" in result.output
    assert "three-weeks" in result.output and "two-days" not in result.output
    assert stored(tmp_path) == {"three-weeks", "two-days", "now"}


def test_gc_in_hours(tmp_path: Path) -> None:
    store_runs(tmp_path, ("yesterday", 1, []), ("now", 0, []))

    result = invoke(tmp_path, "--older-than", "12h")

    assert result.exit_code == 0, result.output
    assert stored(tmp_path) == {"now"}


def test_a_bad_age_exits_2_naming_the_fix_and_touches_no_store(tmp_path: Path) -> None:
    result = invoke(tmp_path, "--older-than", "90 days")

    assert result.exit_code == 2
    assert "'90 days' is not an age" in result.output
    assert "90d, 12h, 2w" in result.output
    assert not (tmp_path / "seatrial.db").exists()
