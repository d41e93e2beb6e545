"""Alerts as a team sees them: ``seatrial run`` of the demo (a real process) posting to local
Feishu, DingTalk, WeCom and Slack servers that check each platform's format and signature;
``seatrial alerts test``; secrets that stay out of every output and the store."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import PROJECT
from tests.cli.test_cli import seatrial
from tests.notify.bots import Bot

SECRET = "SEC-shared-signing-secret-51c0"
ALERTS = """
alerts:
  backoff_s: 0
  channels:
    lark:
      kind: feishu
      url: ${FEISHU_WEBHOOK}
      secret: ${FEISHU_SECRET}
    ding:
      kind: dingtalk
      url: ${DINGTALK_WEBHOOK}
      secret: ${DINGTALK_SECRET}
    wecom:
      kind: wecom
      url: ${WECOM_WEBHOOK}
    slack:
      kind: slack
      url: ${SLACK_WEBHOOK}
"""


@pytest.fixture
def chat():
    bots = {
        "lark": Bot("feishu", SECRET).start(),
        "ding": Bot("dingtalk", SECRET).start(),
        "wecom": Bot("wecom").start(),
        "slack": Bot("slack").start(),
    }
    yield bots
    for bot in bots.values():
        bot.stop()


def env_for(bots: dict[str, Bot]) -> dict[str, str]:
    return {
        "FEISHU_WEBHOOK": bots["lark"].url,
        "FEISHU_SECRET": SECRET,
        "DINGTALK_WEBHOOK": bots["ding"].url,
        "DINGTALK_SECRET": SECRET,
        "WECOM_WEBHOOK": bots["wecom"].url,
        "SLACK_WEBHOOK": bots["slack"].url,
    }


def demo_project(tmp_path: Path, alerts: str = ALERTS) -> Path:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    with (project / "seatrial.yaml").open("a", encoding="utf-8") as config:
        config.write(alerts)
    return project


def leaked(project: Path, outputs: str, bots: dict[str, Bot]) -> list[str]:
    """Secrets (signing secret, the bots' keys) found in the outputs or any file written."""
    secrets = [SECRET, *(bot.token for bot in bots.values())]
    found = [s for s in secrets if s in outputs]
    for path in project.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{s} in {path.name}" for s in secrets if s.encode() in data]
    return found


@pytest.mark.slow
def test_a_failing_gate_sends_one_message_to_each_chat_and_a_passing_run_none(tmp_path, chat):
    project = demo_project(tmp_path)
    failed = seatrial(
        "run", "suites/workspace.yaml", "--agent", "v2", cwd=project, env=env_for(chat)
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    for name, bot in chat.items():
        assert bot.problems == [], name
        assert len(bot.requests) == 1 and len(bot.accepted) == 1, name
        message = bot.accepted[0].text()
        assert "workspace-agent" in message and "UNMET" in message, name
        assert "p0_cases" in message or "min_pass_rate" in message, name
        # No baseline: the message still names each failing case and its failure type.
        for case, failure in EXPECTED_V2_FAILURES.items():
            assert case in message and failure in message, name
    assert failed.stdout.count("alert gate_failed:") == 4
    passed = seatrial(
        "run", "suites/workspace.yaml", "--agent", "v1", cwd=project, env=env_for(chat)
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert [len(bot.requests) for bot in chat.values()] == [1, 1, 1, 1]
    outputs = failed.stdout + failed.stderr + passed.stdout + passed.stderr
    assert leaked(project, outputs, chat) == []


@pytest.mark.slow
def test_a_run_that_failed_its_gates_and_dropped_sends_each_chat_one_message_with_both(
    tmp_path, chat
):
    project = demo_project(tmp_path)
    env = env_for(chat)
    passed = seatrial(
        "run", "suites/workspace.yaml", "--agent", "v1", "--repeats", "3", cwd=project, env=env
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert all(bot.requests == [] for bot in chat.values())
    failed = seatrial(
        "run", "suites/workspace.yaml", "--agent", "v2", "--repeats", "3",
        "--baseline", "latest-passing", cwd=project, env=env,
    )  # fmt: skip
    assert failed.returncode == 1, failed.stdout + failed.stderr
    for name, bot in chat.items():
        assert bot.problems == [], name
        assert len(bot.requests) == 1 and len(bot.accepted) == 1, name
        message = bot.accepted[0].text()
        assert "failed its gates" in message and "UNMET" in message, name
        assert "Pass rates fell against" in message and "task success" in message, name
    assert failed.stdout.count("alert gate_failed+metric_drop:") == 4
    assert "alert metric_drop:" not in failed.stdout


def test_a_missing_variable_stops_the_run_before_it_starts_without_showing_values(tmp_path, chat):
    project = demo_project(tmp_path)
    env = env_for(chat)
    env.pop("DINGTALK_SECRET")
    result = seatrial("run", "suites/workspace.yaml", "--agent", "v2", cwd=project, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "alerts.channels.ding.secret" in result.stderr and "DINGTALK_SECRET" in result.stderr
    assert leaked(project, result.stdout + result.stderr, chat) == []
    assert not (project / ".seatrial" / "seatrial.db").exists()  # nothing ran
    assert all(bot.requests == [] for bot in chat.values())


def test_a_delivery_that_fails_is_a_warning_not_another_exit_code(tmp_path, chat):
    project = demo_project(tmp_path)
    env = env_for(chat) | {"FEISHU_SECRET": "not-the-shared-secret"}
    result = seatrial("run", "suites/workspace.yaml", "--agent", "v2", cwd=project, env=env)
    assert result.returncode == 1, result.stdout + result.stderr  # the gate's code, unchanged
    assert "alert gate_failed: lark: not sent after 1 try: code 19021" in result.stderr
    assert "not-the-shared-secret" not in result.stdout + result.stderr
    assert len(chat["slack"].accepted) == 1


def test_alerts_test_reaches_every_channel_or_the_one_named(tmp_path, chat):
    project = demo_project(tmp_path)
    every = seatrial("alerts", "test", cwd=project, env=env_for(chat))
    assert every.returncode == 0, every.stdout + every.stderr
    assert all(len(bot.accepted) == 1 for bot in chat.values())
    assert "Seatrial test message" in chat["wecom"].accepted[0].text()
    one = seatrial("alerts", "test", "--channel", "slack", cwd=project, env=env_for(chat))
    assert one.returncode == 0 and "slack: sent (1 try)" in one.stdout
    assert [len(bot.requests) for bot in chat.values()] == [1, 1, 1, 2]
    unknown = seatrial("alerts", "test", "--channel", "teams", cwd=project, env=env_for(chat))
    assert unknown.returncode == 2 and "no channel teams" in unknown.stderr
    assert leaked(project, every.stdout + every.stderr + one.stdout, chat) == []


def test_alerts_test_in_quiet_hours_sends_nothing_and_exits_1(tmp_path, chat):
    now = dt.datetime.now(dt.UTC)
    window = "-".join((now + dt.timedelta(minutes=m)).strftime("%H:%M") for m in (-30, 30))
    alerts = (
        f"alerts:\n  quiet_hours: '{window}'\n  channels:\n"
        "    slack: {kind: slack, url: '${SLACK_WEBHOOK}'}\n"
    )
    project = demo_project(tmp_path, alerts)
    result = seatrial("alerts", "test", cwd=project, env=env_for(chat))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"slack: not sent: quiet hours ({window} UTC)" in result.stderr
    assert chat["slack"].requests == []


def test_alerts_test_without_channels_says_how_to_add_one(tmp_path):
    project = demo_project(tmp_path, "")
    result = seatrial("alerts", "test", cwd=project)
    assert result.returncode == 2 and "alerts: channels:" in result.stderr


@pytest.mark.slow
def test_nightly_sends_a_probes_drift_alarm_to_the_channels_that_receive_drift(tmp_path, chat):
    from tests.cli.test_drift_cli import nightly_project

    project = nightly_project(tmp_path)
    with (project / "seatrial.yaml").open("a", encoding="utf-8") as config:
        config.write(
            "alerts:\n  channels:\n"
            "    ops: {kind: wecom, url: '${WECOM_WEBHOOK}', events: [drift]}\n"
            "    eng: {kind: slack, url: '${SLACK_WEBHOOK}', events: [gate_failed]}\n"
        )
    first = seatrial("nightly", cwd=project, env=env_for(chat))
    assert first.returncode == 0, first.stdout + first.stderr
    assert chat["wecom"].requests == []  # the first run is the baseline: nothing moved
    changed = seatrial("nightly", cwd=project, env=env_for(chat) | {"MODEL": "new"})
    assert changed.returncode == 1, changed.stdout + changed.stderr
    [drift] = chat["wecom"].accepted
    assert "drift alarm on probe workspace-probe" in drift.text()
    assert "probe-failing-read" in drift.text()
    assert chat["wecom"].problems == []
    assert all("drift" not in seen.text() for seen in chat["slack"].requests)
