"""report.json and junit.xml streamed from the store a page at a time are, byte for byte,
what the report code that held every attempt in memory wrote (tests/report/golden/)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from seatrial import execute_suite
from seatrial.config import load_config
from seatrial.report import build_report, print_summary, render, write_reports
from seatrial.store import Store
from tests.conftest import agent_spec
from tests.report.streamed_run import store_runs

GOLDEN = Path(__file__).parent / "golden"
FILES = ("report.json", "junit.xml", "summary.md")


def _golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", [1, 2, 500])
def test_files_streamed_from_the_store_are_what_the_in_memory_report_wrote(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: int
) -> None:
    run_id = store_runs(store)
    # Pages of 1 and 2 attempts: a case read over several pages, and several cases to a page.
    monkeypatch.setattr(Store, "attempts_in_pages", _with_page(Store.attempts_in_pages, page))
    report = build_report(store, run_id, with_attempts=False)
    assert all(case.attempts == [] for case in report.cases)
    write_reports(report, tmp_path, store)
    for name in FILES:
        assert (tmp_path / name).read_text(encoding="utf-8") == _golden(name), name


def test_a_report_with_its_attempts_renders_the_same_files(store: Store, tmp_path: Path) -> None:
    report = build_report(store, store_runs(store))
    assert [len(case.attempts) for case in report.cases] == [3, 3, 2, 1, 1]
    write_reports(report, tmp_path)
    for name, fmt in zip(FILES, ("json", "junit", "md"), strict=True):
        assert (tmp_path / name).read_text(encoding="utf-8") == _golden(name), name
        assert render(report, fmt) == _golden(name), fmt


def test_a_store_failing_mid_report_leaves_no_file_and_no_temporary_behind(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = build_report(store, store_runs(store), with_attempts=False)

    def broken(self: Store, *args: Any, **kwargs: Any) -> Any:
        raise OSError("disk I/O error")
        yield  # a generator, as the store's own

    monkeypatch.setattr(Store, "attempts_in_pages", broken)
    with pytest.raises(OSError, match="disk I/O error"):
        write_reports(report, tmp_path / "out", store)
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("with_attempts", [True, False])
def test_the_terminal_summary_is_unchanged(store: Store, with_attempts: bool) -> None:
    report = build_report(store, store_runs(store), with_attempts=with_attempts)
    console = Console(file=io.StringIO(), width=100, color_system=None, force_terminal=False)
    print_summary(report, console)
    assert console.file.getvalue() == _golden("terminal.txt")  # type: ignore[attr-defined]


def _with_page(method: Any, page: int) -> Any:
    def paged(self: Store, run_id: str, cases: Any, _: int = page) -> Any:
        return method(self, run_id, cases, page)

    return paged


SUITE = """
suite: streamed
cases:
  - id: hello
    input: hello
    repeats: 3
    assertions:
      - {type: contains, value: hello}
  - id: refund
    input: refund please
    category: billing
    assertions:
      - {type: contains, value: "工单号"}
"""


def test_seatrial_run_keeps_no_attempt_in_memory_and_writes_every_one_to_its_files(
    write_suite: Callable[[str], Path], tmp_path: Path, store: Store
) -> None:
    run = execute_suite(
        write_suite(SUITE),
        agent_spec("echo"),
        config=load_config(tmp_path),
        store=store,
        report_dir=tmp_path / "out",
        with_attempts=False,  # as `seatrial run` calls it
    )
    assert [(c.case_id, c.attempt_count, c.attempts) for c in run.report.cases] == [
        ("hello", 3, []),
        ("refund", 1, []),
    ]
    assert run.report.cases[1].failure_type == "format"  # its first failing attempt
    whole = build_report(store, run.run_id)  # every attempt held, as before
    for name, fmt in zip(FILES, ("json", "junit", "md"), strict=True):
        assert (tmp_path / "out" / name).read_text(encoding="utf-8") == render(whole, fmt), name
