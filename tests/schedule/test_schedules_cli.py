"""``seatrial schedules``: the table of schedules, and one schedule's history."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.store import Store, claim_schedule, finish_schedule

DUE = dt.datetime(2026, 12, 1, 18, 0, tzinfo=dt.UTC).timestamp()  # 02:00 Dec 2, Shanghai

CONFIG = """\
project: sched
schedules:
  - {name: nightly, cron: '0 2 * * *', timezone: Asia/Shanghai, suites: [s.yaml]}
  - {name: hourly, cron: '15 * * * *', suites: [s.yaml]}
"""


def invoke(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(project)
    monkeypatch.delenv("SEATRIAL_DB_URL", raising=False)
    return CliRunner(env={"COLUMNS": "220"}).invoke(app, ["schedules", *args])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "seatrial.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "s.yaml").write_text("suite: s\ncases: []\n", encoding="utf-8")
    with Store.open(project_dir=tmp_path) as store:
        claim_schedule(store, "nightly", DUE - 86_400, claimed_by="a:1", now=DUE - 86_400)
        finish_schedule(store, "nightly", DUE - 86_400, status="ok", run_ids=["r0"], now=DUE)
        claim_schedule(store, "nightly", DUE, claimed_by="b:2", now=DUE)
        finish_schedule(store, "nightly", DUE, status="error", error="agent down", now=DUE)
    return tmp_path


def test_the_table_shows_job_cron_next_due_and_the_last_result(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = invoke(project, monkeypatch)
    assert result.exit_code == 0, result.output
    nightly = next(line for line in result.output.splitlines() if "nightly" in line)
    assert "suites s.yaml" in nightly and "0 2 * * *" in nightly
    assert "02:00 Asia/Shanghai" in nightly  # the next due time, in the schedule's zone
    assert "2026-12-02 02:00 Asia/Shanghai" in nightly and "error: agent down" in nightly
    hourly = next(line for line in result.output.splitlines() if "hourly" in line)
    assert "not run yet" in hourly and ":15 UTC" in hourly


def test_history_lists_a_schedules_due_times_newest_first(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = invoke(project, monkeypatch, "--history", "nightly")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "Asia/Shanghai" in line]
    assert len(lines) == 2
    assert "2026-12-02 02:00" in lines[0] and "error: agent down" in lines[0] and "b:2" in lines[0]
    assert "2026-12-01 02:00" in lines[1] and "ok" in lines[1] and "r0" in lines[1]


def test_an_unknown_schedule_is_exit_2_naming_the_known_ones(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = invoke(project, monkeypatch, "--history", "weekly")
    assert result.exit_code == 2
    assert "no such schedule" in result.output and "hourly, nightly" in result.output


def test_a_project_without_schedules_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "seatrial.yaml").write_text("project: none\n", encoding="utf-8")
    result = invoke(tmp_path, monkeypatch)
    assert result.exit_code == 0
    assert "has no `schedules:`" in result.output


def test_with_lang_zh_the_table_and_history_are_in_chinese(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = invoke(project, monkeypatch, "--lang", "zh")
    history = invoke(project, monkeypatch, "--history", "nightly", "--lang", "zh")
    english = invoke(project, monkeypatch, "--history", "nightly")

    assert table.exit_code == 0, table.output
    header = table.output.splitlines()[0].replace("┃", " ").split()
    assert header == ["定时任务", "任务", "cron", "下次执行", "上次执行", "结果", "运行"]
    nightly = next(line for line in table.output.splitlines() if "nightly" in line)
    assert "出错：agent down" in nightly
    hourly = next(line for line in table.output.splitlines() if "hourly" in line)
    assert "尚未执行" in hourly
    lines = [line for line in history.output.splitlines() if "Asia/Shanghai" in line]
    assert "出错：agent down" in lines[0] and "成功" in lines[1]
    assert history.output.splitlines()[0].replace("┃", " ").split() == [
        "计划时间", "结果", "运行", "服务器"
    ]  # fmt: skip
    assert "error: agent down" in english.output
    assert english.output.splitlines()[0].replace("┃", " ").split() == [
        "due", "result", "runs", "server"
    ]  # fmt: skip


def test_a_schedule_not_run_yet_and_no_schedules_say_so_in_chinese(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    never = invoke(project, monkeypatch, "--history", "hourly", "--lang", "zh")
    empty = tmp_path_factory.mktemp("no-schedules")
    (empty / "seatrial.yaml").write_text("project: none\n", encoding="utf-8")
    none = invoke(empty, monkeypatch, "--lang", "zh")

    assert never.output == "定时任务 hourly：尚未执行\n"
    assert none.exit_code == 0, none.output
    assert (
        none.output == f"{empty / 'seatrial.yaml'} 里没有 `schedules:`（见 docs/monitoring.md）\n"
    )
