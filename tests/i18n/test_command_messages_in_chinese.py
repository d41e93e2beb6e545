"""The commands translated last speak the reader's language: ``--lang zh`` (or
``SEATRIAL_LANG=zh``) prints their lines and their errors in Chinese, with the ids, paths and
option names as written and the same exit codes; a reader who chose nothing reads English."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.i18n import render, use_language
from seatrial.judge import calibration_alarm
from seatrial.store import Calibration
from seatrial.testing import FakeOpenAI
from tests.conftest import agent_spec
from tests.run.replay_project import KEY_ENV, order_model, write_project
from tests.run.test_judge_run import seatrial_run_judged

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
NO_LANGUAGE = {"SEATRIAL_LANG": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}
"""The environment of a reader who chose nothing: English."""


def seatrial(folder: Path, *args: str, **environ: str | None) -> Result:
    """``seatrial ARGS`` in ``folder`` (its own store, unless the command has none), in this
    process."""
    cwd = Path.cwd()
    os.chdir(folder)
    store = [] if args[0] == "worker" else ["--db", f"sqlite:///{folder / 'store.db'}"]
    try:
        runner = CliRunner(env={"COLUMNS": "250", **NO_LANGUAGE, **environ})
        return runner.invoke(app, [*args, *store])
    finally:
        os.chdir(cwd)


def command(folder: Path, *args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """``seatrial ARGS`` as a process of its own (a run, a rerun)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("SEATRIAL_LANG", "LC_ALL")}
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, "LANG": "C.UTF-8", "COLUMNS": "250", **environ},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "seatrial.yaml").write_text("project: cmds\n", encoding="utf-8")
    return tmp_path


# -- seatrial cases: expand, pending, approve -------------------------------------------------


def test_cases_pending_and_approve_speak_chinese_with_the_same_exit_codes(project):
    empty = seatrial(project, "cases", "pending", "--lang", "zh")
    bad_status = seatrial(project, "cases", "pending", "--status", "done", "--lang", "zh")
    both = seatrial(project, "cases", "approve", "abc", "--all", "--lang", "zh")
    no_set = seatrial(project, "cases", "approve", "--all", SEATRIAL_LANG="zh")

    assert empty.exit_code == 0 and empty.output.strip() == "没有待审用例"
    assert bad_status.exit_code == 2
    assert "--status 只能是 pending, approved, rejected 或 all，而不是 'done'" in bad_status.output
    assert both.exit_code == 2 and "请给出待审 id 或 --all，不能同时给" in both.output
    assert no_set.exit_code == 2
    assert "--all 需要同时给出 --dataset NAME：要把用例批准进哪个黄金集" in no_set.output


def test_cases_expand_says_where_the_case_is_not_in_chinese(project):
    (project / "suite.yaml").write_text(
        "suite: s\ncases:\n  - id: book\n    input: hi\n", encoding="utf-8"
    )
    nowhere = seatrial(project, "cases", "expand", "book", "--lang", "zh")
    unknown = seatrial(project, "cases", "expand", "nope", "--suite", "suite.yaml", "--lang", "zh")
    no_model = seatrial(project, "cases", "expand", "book", "--suite", "suite.yaml", "--lang", "zh")

    assert nowhere.exit_code == 2
    assert "请指明用例在哪里：--suite FILE，或 --dataset NAME（黄金集）" in nowhere.output
    assert unknown.exit_code == 2
    assert "suite.yaml 里没有用例 'nope'（其中的用例：book）" in unknown.output
    assert no_model.exit_code == 2
    assert "请指定由哪个模型写变体：--model NAME" in no_model.output
    assert "（已有：未配置）" in no_model.output


def test_cases_commands_stay_english_when_nobody_chose(project):
    empty = seatrial(project, "cases", "pending")
    no_set = seatrial(project, "cases", "approve", "--all")
    nowhere = seatrial(project, "cases", "expand", "book")

    assert empty.exit_code == 0 and empty.output.strip() == "no pending cases"
    assert no_set.exit_code == 2
    assert "--all needs --dataset NAME: the golden set whose cases to approve" in no_set.output
    assert nowhere.exit_code == 2
    assert "say where the case is: --suite FILE, or --dataset NAME (a golden set)" in (
        nowhere.output
    )


# -- seatrial cases from-trace and seatrial traces --------------------------------------------


def test_from_trace_and_traces_speak_chinese(project):
    neither = seatrial(project, "cases", "from-trace", "--lang", "zh")
    listed = seatrial(project, "traces", "list", SEATRIAL_LANG="zh")
    (project / "export.json").write_text("{}", encoding="utf-8")
    bad_format = seatrial(
        project, "cases", "from-trace", "--file", "export.json", "--format", "csv", "--lang", "zh"
    )

    assert neither.exit_code == 2
    assert "请指定一条 trace：TRACE_ID 或 --file EXPORT（二选一）" in neither.output
    assert listed.exit_code == 0
    assert "没有匹配的已存 trace（可用 `seatrial ingest FILE` 导入）" in listed.output
    assert bad_format.exit_code == 2 and "未知的 trace 格式 'csv'" in bad_format.output


def test_from_trace_stays_english_when_nobody_chose(project):
    neither = seatrial(project, "cases", "from-trace")
    listed = seatrial(project, "traces", "list")

    assert neither.exit_code == 2
    assert "name one trace: a TRACE_ID, or --file EXPORT (not both)" in neither.output
    assert "no stored trace matches" in listed.output


# -- seatrial contract, gateway serve, serve, worker ------------------------------------------


def test_contract_errors_in_chinese_name_the_file_and_the_faults(project):
    (project / "tools.json").write_text("[]", encoding="utf-8")
    no_tools = seatrial(project, "contract", "tools.json", "--agent", "model:m", "--lang", "zh")
    bad_fault = seatrial(
        project, "contract", "tools.json", "--agent", "model:m", "--faults", "fire", "--lang", "zh"
    )
    english = seatrial(project, "contract", "tools.json", "--agent", "model:m")

    assert no_tools.exit_code == 2
    assert "tools.json 里没有工具；请给一个工具 schema 文件" in no_tools.output
    assert bad_fault.exit_code == 2
    assert "--faults：未知的故障 fire；请用逗号分隔，从以下几种中选：" in bad_fault.output
    assert "missing_param" in bad_fault.output
    assert english.exit_code == 2
    assert "tools.json holds no tools; give a file of tool schemas" in english.output


def test_gateway_serve_without_models_says_so_in_chinese(project):
    chinese = seatrial(project, "gateway", "serve", "--lang", "zh")
    english = seatrial(project, "gateway", "serve")

    assert chinese.exit_code == 2
    assert "没有配置任何模型：启动网关前，请在 seatrial.yaml 里加一个 `models:` 段" in (
        chinese.output
    )
    assert english.exit_code == 2 and "no models configured" in english.output


def test_serve_refuses_a_busy_port_and_an_open_host_in_chinese(project):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = seatrial(project, "serve", "--port", port, "--lang", "zh")
        english = seatrial(project, "serve", "--port", port)
    open_host = seatrial(project, "serve", "--host", "0.0.0.0", SEATRIAL_LANG="zh")

    assert busy.exit_code == 2
    assert f"无法监听 127.0.0.1:{port}：" in busy.output
    assert "请换一个 --port（--port 0 表示任选一个空闲端口），或停掉占用它的程序" in busy.output
    assert english.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}: " in english.output
    assert open_host.exit_code == 2
    assert "--host 0.0.0.0 会让其他机器也能访问：请加上 --token TOKEN" in open_host.output


def test_worker_names_the_log_levels_in_chinese(project):
    done = seatrial(project, "worker", "--loglevel", "loud", "--lang", "zh")

    assert done.exit_code == 2
    assert "--loglevel loud：请从 debug, info, warning, error 中选一个" in done.output


# -- --agent specs ----------------------------------------------------------------------------


def test_a_bad_agent_spec_is_said_in_chinese_with_exit_2(project):
    (project / "suite.yaml").write_text("suite: s\ncases:\n  - {id: x, input: hi}\n", "utf-8")
    chinese = command(project, "run", "suite.yaml", "--agent", "nope", "--lang", "zh")
    english = command(project, "run", "suite.yaml", "--agent", "nope")

    assert chinese.returncode == 2
    assert "未知的智能体 `nope`。请写成以下形式之一：python:module:function；" in chinese.stderr
    assert "model:NAME（NAME 为 seatrial.yaml 中 `models:` 下的模型）" in chinese.stderr
    assert english.returncode == 2
    assert "unknown agent `nope`. Write one of: python:module:function; " in english.stderr


def test_a_header_naming_an_unset_variable_is_said_in_chinese(project):
    (project / "seatrial.yaml").write_text(
        "agents:\n"
        "  remote:\n"
        "    spec: http://127.0.0.1:9/agent\n"
        "    headers: {Authorization: 'Bearer ${SEATRIAL_TEST_UNSET_TOKEN}'}\n",
        encoding="utf-8",
    )
    (project / "suite.yaml").write_text("suite: s\ncases:\n  - {id: x, input: hi}\n", "utf-8")
    done = command(project, "run", "suite.yaml", "--agent", "remote", SEATRIAL_LANG="zh")

    assert done.returncode == 2
    assert (
        "请求头 `Authorization` 引用了 ${SEATRIAL_TEST_UNSET_TOKEN}，但它没有设置；"
        "请先 export SEATRIAL_TEST_UNSET_TOKEN 再运行"
    ) in done.stderr


# -- seatrial rerun ---------------------------------------------------------------------------


def test_rerun_prints_its_lines_in_chinese(tmp_path):
    case = "where-is-my-order"
    with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        environ = {KEY_ENV: "sk-test-replay"}
        db = ("--db", f"sqlite:///{tmp_path / 'store.db'}")
        recorded = command(tmp_path, "run", "suite.yaml", "--agent", "orders", "--gateway", *db,
                           **environ)  # fmt: skip
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        [cassette] = (tmp_path / ".seatrial" / "cassettes").iterdir()
        again = command(tmp_path, "rerun", f"{cassette.stem}:{case}", *db, "--lang", "zh",
                        **environ)  # fmt: skip

    assert again.returncode == 0, again.stdout + again.stderr
    assert f"重跑 {cassette.stem}:{case}" in again.stdout
    assert "模型回答取自 cassette" in again.stdout
    assert "自快照以来没有变化" in again.stdout
    assert "标签 replay" in again.stdout
    assert "结论：通过 -> 通过" in again.stdout
    assert "已复现：轨迹完全一致（4 步）" in again.stdout


# -- seatrial judge ---------------------------------------------------------------------------


def test_the_uncalibrated_judge_notice_is_chinese_and_the_stored_reason_english(tmp_path):
    done, calls = seatrial_run_judged(tmp_path, "--lang", "zh")

    assert calls == 1
    assert done.returncode in (0, 1), done.stdout + done.stderr
    notice = next(line for line in done.stdout.splitlines() if line.startswith("评审："))
    assert notice.startswith("评审：评审模型 grader prompt v1（hash ")
    assert "未校准：还没有校准记录；它判的失败只作参考；" in notice
    assert "请运行 `seatrial judge calibrate --judge grader --labels FILE`" in notice
    report = json.loads(command(tmp_path, "report", "latest", "-f", "json").stdout)
    # What the run stores stays English: another reader renders it in their own language.
    assert "is not calibrated: no calibration yet" in report["judge"]["reason"]


def test_judge_agreement_notes_are_chinese(tmp_path):
    labels = tmp_path / "labels.jsonl"
    predictions = tmp_path / "predictions.jsonl"
    labels.write_text(
        "".join(json.dumps({"input": "q", "output": "a", "label": "pass"}) + "\n" for _ in "ab"),
        "utf-8",
    )
    predictions.write_text('{"label": "pass"}\n{"label": "pass"}\n', "utf-8")
    args = ("judge", "agreement", "--predictions", str(predictions), "--labels", str(labels))
    chinese = command(tmp_path, *args, "--lang", "zh")
    english = command(tmp_path, *args)

    assert chinese.returncode == 0, chinese.stderr
    assert "注意：kappa 无定义：人工标注和评审结果全都是同一个标签" in chinese.stdout
    assert "注意：每个人工标注都是 'pass'：只在一类条目上衡量评审模型" in chinese.stdout
    assert english.returncode == 0
    assert "note: kappa is undefined: the human labels and the judgements" in english.stdout
    assert "note: every human label is 'pass': kappa and agreement say little" in english.stdout


def test_a_bad_label_file_is_said_in_chinese_with_its_line(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"input": "q", "output": "a", "label": "maybe"}\n', "utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"label": "pass"}\n', "utf-8")
    done = command(
        tmp_path, "judge", "agreement", "--predictions", str(predictions), "--labels", str(labels),
        "--lang", "zh",
    )  # fmt: skip

    assert done.returncode == 2
    assert f"{labels}:1：标签 'maybe' 不是逐条（pointwise）标签；请写 pass 或 fail" in done.stderr


def test_the_calibration_alarm_reads_in_chinese():
    def calibration(agreement: float) -> Calibration:
        return Calibration(
            judge_model="grader", prompt_hash="a" * 64, prompt_version="v1", created_at=0.0,
            items=50, agreement=agreement, kappa=None, base_rate=0.5,
        )  # fmt: skip

    with use_language("zh_CN"):
        alarm = calibration_alarm(calibration(0.9), calibration(0.6), 0.8, 30)
    english = calibration_alarm(calibration(0.9), calibration(0.6), 0.8, 30)

    assert alarm is not None and alarm.startswith("告警：评审模型 grader（prompt v1，hash aaaa")
    assert "上次在 50 个条目上与人工一致 90.0%，这次在 50 个条目上只有 60.0%" in alarm
    assert english is not None and english.startswith("ALARM: judge grader (prompt v1, hash")


def test_the_judge_trust_is_stored_in_english_and_printed_in_either_language():
    from seatrial.config import JudgeSettings
    from seatrial.judge import judge_trust

    trust = judge_trust("grader", "v1", "b" * 64, [], JudgeSettings(model="grader"))

    assert trust.reason.startswith("judge grader prompt v1 (hash bbbbbbbbbbbb) is not calibrated")
    assert render(trust.said, trust.reason, "en") == trust.reason
    assert render(trust.said, trust.reason, "zh_CN").startswith(
        "评审模型 grader prompt v1（hash bbbbbbbbbbbb）未校准：还没有校准记录"
    )


def test_an_agent_spec_is_english_by_default_and_the_echo_agent_still_runs(project):
    # The spec forms are marked for the catalogs; a python: spec itself is never translated.
    (project / "suite.yaml").write_text("suite: s\ncases:\n  - {id: x, input: hi}\n", "utf-8")
    done = command(project, "run", "suite.yaml", "--agent", agent_spec("echo"), "--lang", "zh")

    assert done.returncode in (0, 1), done.stdout + done.stderr


# -- a run's progress, references to runs and attempts, bench ---------------------------------


def test_a_runs_progress_lines_and_a_bad_reference_are_chinese(project):
    (project / "suite.yaml").write_text(
        "suite: s\ncases:\n  - {id: x, input: hi, assertions: [{type: contains, value: hi}]}\n",
        "utf-8",
    )
    ran = command(project, "run", "suite.yaml", "--agent", agent_spec("echo"), "--lang", "zh")
    unknown_run = command(project, "rerun", "nope:x", SEATRIAL_LANG="zh")
    no_case = command(project, "rerun", "latest", "--lang", "zh")
    english = command(project, "rerun", "latest")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "正在运行 1 次执行（已保存 0 次）" in ran.stdout
    assert "[1/1] x #1: 通过" in ran.stdout
    assert unknown_run.returncode == 2
    assert "中没有运行 id、id 前缀或标签 'nope'；`seatrial runs` 可列出已存的运行" in (
        unknown_run.stderr
    )
    assert no_case.returncode == 2
    assert (
        "'latest' 只指明了运行，没有用例；请写 latest:CASE 或加上 --case CASE（其中的用例：x）"
        in (no_case.stderr)
    )
    assert english.returncode == 2
    assert (
        "'latest' names a run but no case; write latest:CASE or add --case CASE (its cases: x)"
        in (english.stderr)
    )


def test_bench_needs_two_agents_in_chinese(project):
    (project / "suite.yaml").write_text("suite: s\ncases:\n  - {id: x, input: hi}\n", "utf-8")
    done = seatrial(project, "bench", "suite.yaml", "--agents", "model:a", "--lang", "zh")

    assert done.exit_code == 2
    assert (
        "--agents 至少需要两个智能体，用逗号分隔（例如 --agents model:gpt-4o,model:qwen-max）"
        in (done.output)
    )


def test_a_recorded_agent_whose_file_is_missing_is_said_in_chinese(project):
    (project / "suite.yaml").write_text("suite: s\ncases:\n  - {id: x, input: hi}\n", "utf-8")
    done = command(project, "run", "suite.yaml", "--agent", "recorded:gone.jsonl", "--lang", "zh")

    assert done.returncode == 2
    assert "无法读取回放文件 " in done.stderr and "gone.jsonl" in done.stderr
    assert "；请修正路径" in done.stderr


def test_the_recovery_table_reads_in_chinese_lined_up_by_width():
    from seatrial.dataset import RecoveryRow, RecoveryTable, render_recovery_table

    row = RecoveryRow(tool="get_order", fault="http_500", attempts=2, passed=1, repaired_in_1=1)
    table = RecoveryTable(run_id="r1", rows=[row], min_pass_rate=0.8, gate_met=False)
    with use_language("zh_CN"):
        text = render_recovery_table(table)
    english = render_recovery_table(table)

    header, line, *summary = text.splitlines()
    assert header.split() == ["工具", "故障", "执行次数", "通过", "1", "轮内修复", "2", "轮内",
                              "修复后又出错", "未修复", "未调用", "原样重试"]  # fmt: skip
    assert line.startswith("get_order  http_500")
    assert summary[0] == "2 次执行中通过 1 次（50%）：门禁未通过（至少需要 80%）"
    assert (
        english.splitlines()[-2]
        == "passed 1 of 2 attempts (50%): gate NOT met (needs at least 80%)"
    )
