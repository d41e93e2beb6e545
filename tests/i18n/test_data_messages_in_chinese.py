"""The data side in the reader's language: ``seatrial datasets import|export|retire|check|
verify``, ``import``, ``ingest``, ``gc`` and ``mask`` print in Chinese with ``--lang zh`` (or
``SEATRIAL_LANG=zh``), and so do the errors of a trace file that cannot be read, of a store
that cannot be opened, of a golden set that does not exist; paths, ids and exit codes as in
English, which is unchanged when nobody chose."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.record import RunInfo
from seatrial.store import Store

NO_LANGUAGE = {"SEATRIAL_LANG": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}
"""The environment of a reader who chose nothing: English."""
SUITE = """
suite: refunds
cases:
  - {id: refund-1, input: 我要退款, category: 退款, priority: P0}
  - {id: refund-2, turns: [我要退款, 订单号 A1002], category: 退款}
  - {id: order-1, input: 查一下我的订单, category: 查单}
"""


def seatrial(*args: str, **environ: str | None) -> Result:
    env = {"COLUMNS": "200", "USER": "qa-lead", **NO_LANGUAGE, **environ}
    return CliRunner(env=env).invoke(app, list(args))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seatrial.yaml").write_text("project: data\n", encoding="utf-8")
    (tmp_path / "refunds.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def db(folder: Path) -> str:
    return f"sqlite:///{folder / 'seatrial.db'}"


# -- seatrial datasets ------------------------------------------------------------------------


def test_datasets_import_check_retire_verify_and_export_speak_chinese(project: Path) -> None:
    url = db(project)

    imported = seatrial(
        "datasets", "import", "refunds", "refunds.yaml", "--db", url, "--lang", "zh"
    )
    again = seatrial("datasets", "import", "refunds", "refunds.yaml", "--db", url, "--lang", "zh")
    checked = seatrial("datasets", "check", "refunds", "--db", url, "--lang", "zh")
    retired = seatrial(
        "datasets", "retire", "refunds", "order-1", "--reason", "拆分", "--db", url, "--lang", "zh"
    )
    verified = seatrial("datasets", "verify", "--db", url, "--lang", "zh")
    exported = seatrial("datasets", "export", "refunds@1", "out.jsonl", "--db", url, "--lang", "zh")

    for result in (imported, again, checked, retired, verified, exported):
        assert result.exit_code == 0, result.output
    assert "refunds v1：3 个用例" in imported.stdout
    assert "警告：P0 用例占 33%（3 个中有 1 个）；至少应有 40% 是 P0" in imported.stdout
    assert "警告：防幻觉用例只有 0 个" in imported.stdout
    assert "refunds：没有变化，仍为 v1" in again.stdout
    assert "refunds@1：3 个用例" in checked.stdout
    assert "refunds v2：已停用 order-1" in retired.stdout
    assert "refunds：v1 至 v2 校验通过（head " in verified.stdout
    assert "已将 refunds@1 的 3 个用例写入 out.jsonl" in exported.stdout
    assert (project / "out.jsonl").is_file()


def test_datasets_in_english_when_nobody_chose(project: Path) -> None:
    url = db(project)

    imported = seatrial("datasets", "import", "refunds", "refunds.yaml", "--db", url)
    verified = seatrial("datasets", "verify", "--db", url)
    exported = seatrial("datasets", "export", "refunds", "out.jsonl", "--db", url)

    assert "refunds v1: 3 cases" in imported.stdout
    assert "warning: P0 cases are 33% of the set (1 of 3); at least 40% should be P0" in (
        imported.stdout
    )
    assert "refunds: v1 to v1 verified (head " in verified.stdout
    assert "wrote 3 cases of refunds@1 to out.jsonl" in exported.stdout


def test_a_golden_set_that_does_not_exist_is_named_in_chinese_with_exit_2(project: Path) -> None:
    url = db(project)
    seatrial("datasets", "import", "refunds", "refunds.yaml", "--db", url)

    missing = seatrial("datasets", "check", "nope", "--db", url, "--lang", "zh")
    too_new = seatrial("datasets", "check", "refunds@7", "--db", url, "--lang", "zh")
    english = seatrial("datasets", "check", "nope", "--db", url)

    assert missing.exit_code == too_new.exit_code == english.exit_code == 2
    assert "中没有黄金集 'nope'（已有：refunds）" in missing.output
    assert "可用 `seatrial datasets import nope FILE` 创建" in missing.output
    assert "黄金集 'refunds' 只有版本 1 至 1，没有 7" in too_new.output
    assert "no golden set 'nope' in the store at" in english.output


def test_a_changed_golden_row_is_named_in_chinese_and_exits_1(project: Path) -> None:
    url = db(project)
    seatrial("datasets", "import", "refunds", "refunds.yaml", "--db", url)
    with Store.open(url) as store, store.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE golden_versions SET note = 'edited by hand'")

    result = seatrial("datasets", "verify", "refunds", "--db", url, "--lang", "zh")

    assert result.exit_code == 1, result.output
    assert "被改动：refunds v1：版本记录（修改人、时间、备注、数量或变更列表）与其哈希不符" in (
        result.output
    )
    assert "以上历史是在数据库中被直接改动的，并非 Seatrial 所为" in result.output


# -- a store that cannot be opened ------------------------------------------------------------


def test_a_store_that_cannot_be_opened_says_why_in_chinese(project: Path) -> None:
    bad = "mysql://qa:secret@db.example/seatrial"

    chinese = seatrial("datasets", "list", "--db", bad, "--lang", "zh")
    english = seatrial("datasets", "list", "--db", bad)

    assert chinese.exit_code == english.exit_code == 3
    assert "无法打开 mysql://qa:***@db.example/seatrial：Seatrial 只能把运行存到 SQLite" in (
        chinese.output
    )
    assert "请检查 --db 或 SEATRIAL_DB_URL" in chinese.output
    assert "secret" not in chinese.output
    assert "Seatrial stores runs in SQLite or PostgreSQL, not 'mysql'" in english.output


# -- seatrial gc ------------------------------------------------------------------------------


def _old_runs(url: str) -> None:
    now = time.time()
    with Store.open(url) as store:
        for name, days, tags in (("old-plain", 120, []), ("old-tagged", 100, ["release"])):
            ended = now - days * 86_400
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
        young = RunInfo(
            run_id="young",
            suite="support",
            agent="v2",
            status="finished",
            started_at=now - 60,
            finished_at=now,
        )
        store.create_run(young, [])


def test_gc_says_what_it_deleted_and_kept_in_chinese(project: Path) -> None:
    url = db(project)
    _old_runs(url)

    dry = seatrial("gc", "--older-than", "90d", "--dry-run", "--db", url, "--lang", "zh")
    done = seatrial("gc", "--older-than", "90d", "--db", url, SEATRIAL_LANG="zh")

    assert dry.exit_code == done.exit_code == 0, dry.output + done.output
    assert "将删除 1 次在" in dry.stdout and "之前结束的运行" in dry.stdout
    assert "old-plain" in dry.stdout and "已完成" in dry.stdout
    assert "已删除 1 次在" in done.stdout
    assert "保留了 1 次旧运行：1 次带标签" in done.stdout


def test_gc_refuses_a_bad_age_in_chinese_with_exit_2(project: Path) -> None:
    chinese = seatrial("gc", "--older-than", "soon", "--db", db(project), "--lang", "zh")
    english = seatrial("gc", "--older-than", "soon", "--db", db(project))

    assert chinese.exit_code == english.exit_code == 2
    assert "--older-than 'soon' 不是有效的时长；请写一个正数加单位 s、m、h、d 或 w" in (
        chinese.output
    )
    assert "--older-than 'soon' is not an age" in english.output


# -- trace files: seatrial ingest and seatrial mask -------------------------------------------


def test_a_bad_jsonl_line_is_named_in_chinese_and_nothing_is_stored(project: Path) -> None:
    bad = project / "traces.jsonl"
    bad.write_text('{"resourceSpans": []}\n{"resourceSpans": [\n', encoding="utf-8")

    chinese = seatrial("ingest", str(bad), "--db", db(project), "--lang", "zh")
    english = seatrial("ingest", str(bad), "--db", db(project))

    assert chinese.exit_code == english.exit_code == 2
    assert f"{bad}:2：第 2 行不是有效的 JSON（第 " in chinese.output
    assert "JSONL 文件每行一个 JSON 值" in chinese.output
    assert f"{bad}:2: line 2 is not valid JSON (" in english.output


def test_a_file_of_no_known_format_lists_the_formats_in_chinese(project: Path) -> None:
    odd = project / "odd.json"
    odd.write_text('{"hello": 1}', encoding="utf-8")

    result = seatrial("ingest", str(odd), "--db", db(project), SEATRIAL_LANG="zh")

    assert result.exit_code == 2
    assert f"{odd}：不是 Seatrial 认识的 trace 导出格式。支持的格式有：" in result.output
    assert "  - swe-agent：SWE-agent 轨迹：包含 `trajectory` 或 `history` 的对象" in result.output


def test_a_swe_agent_trajectory_that_breaks_its_format_says_where_in_chinese(
    project: Path,
) -> None:
    trajectory = project / "run.traj"
    trajectory.write_text(json.dumps({"trajectory": [{"action": 5}], "history": []}))

    result = seatrial("ingest", str(trajectory), "--db", db(project), "--lang", "zh")

    assert result.exit_code == 2, result.output
    assert f"{trajectory}：不是有效的 swe-agent 文件：" in result.output
    assert ".action：应为智能体执行的命令（字符串）" in result.output


def test_a_langfuse_observation_without_a_start_says_where_in_chinese(project: Path) -> None:
    export = project / "langfuse.jsonl"
    good = {"id": "t1", "timestamp": "2026-01-01T00:00:00Z", "observations": []}
    bad = {"id": "t2", "timestamp": "2026-01-01T00:00:00Z", "observations": [{"id": "o"}]}
    export.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")

    result = seatrial("ingest", str(export), "--db", db(project), "--lang", "zh")

    assert result.exit_code == 2, result.output
    assert f"{export}:2：不是有效的 langfuse 文件：" in result.output
    assert "需要 `id` 和 `startTime`（ISO 8601）" in result.output


def test_mask_check_prints_in_chinese(project: Path) -> None:
    notes = project / "turns.txt"
    notes.write_text("我的手机 13800138000\n改成 13912345678\n", encoding="utf-8")

    chinese = seatrial("mask", "--check", str(notes), "--lang", "zh")
    english = seatrial("mask", "--check", str(notes))

    assert chinese.exit_code == english.exit_code == 0, chinese.output
    header = chinese.stdout.splitlines()[0].replace("┃", " ").split()
    assert header == ["类型", "位置", "值", "替换标记"]
    assert "第 2 行" in chinese.stdout
    assert f"{notes}（纯文本）：将脱敏 2 个值（phone 2）；未写入任何文件" in chinese.stdout
    assert "13800138000" not in chinese.stdout
    assert "line 2" in english.stdout
    assert "(plain text): would mask 2 values (phone 2); nothing was written" in english.stdout


def test_mask_refuses_a_json_file_of_no_known_format_in_chinese(project: Path) -> None:
    odd = project / "odd.json"
    odd.write_text('{"phone": "13800138000"}', encoding="utf-8")

    result = seatrial("mask", "--check", str(odd), SEATRIAL_LANG="zh")

    assert result.exit_code == 2
    assert "不是 Seatrial 认识的 trace 导出格式" in result.output
    assert "（不是 JSON 的文件会按纯文本脱敏）" in result.output
    assert "13800138000" not in result.output


# -- seatrial import --------------------------------------------------------------------------


def test_import_of_an_empty_tau_bench_file_is_refused_in_chinese(project: Path) -> None:
    empty = project / "results.json"
    empty.write_text("[]", encoding="utf-8")

    chinese = seatrial("import", "tau-bench", str(empty), "--db", db(project), "--lang", "zh")
    english = seatrial("import", "tau-bench", str(empty), "--db", db(project))

    assert chinese.exit_code == english.exit_code == 2
    assert f"{empty}：列表为空；应为 tau-bench 结果文件" in chinese.output
    assert f"{empty}: the list is empty; expected a tau-bench results file" in english.output


def test_datasets_show_json_keeps_its_english_warnings_whatever_the_language(
    project: Path,
) -> None:
    url = db(project)
    seatrial("datasets", "import", "refunds", "refunds.yaml", "--db", url)

    chinese = seatrial(
        "datasets", "show", "refunds", "--format", "json", "--db", url, "--lang", "zh"
    )
    english = seatrial("datasets", "show", "refunds", "--format", "json", "--db", url)

    assert chinese.exit_code == english.exit_code == 0, chinese.output
    assert json.loads(chinese.stdout) == json.loads(english.stdout)
    messages = [warning["message"] for warning in json.loads(chinese.stdout)["warnings"]]
    assert "P0 cases are 33% of the set (1 of 3); at least 40% should be P0" in messages
