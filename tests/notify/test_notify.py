"""Sending a notification to each platform's webhook: formats, signatures, retries, quiet
hours, secrets from the environment. Every platform is a real local server (tests/notify/bots.py)
that checks the request as the platform documents it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from seatrial.errors import ConfigError
from seatrial.notify import AlertSettings, Notification, notify

NOTE = Notification(
    event="gate_failed",
    title="Seatrial: workspace-agent failed its gates",
    text="Run `r1` of **workspace-agent** missed its gates.\n\n- P0 p0_cases: UNMET",
    link="https://seatrial.example.com/runs/r1",
    facts=(("suite", "workspace-agent"), ("agent", "v2")),
)
SECRET = "SEC-signing-secret-7d21"


def settings(**channels: dict[str, object]) -> AlertSettings:
    return AlertSettings.model_validate({"channels": channels, "backoff_s": 0})


async def test_each_platform_receives_its_own_format_signed_where_it_signs(bot):
    bots = {
        "feishu": bot("feishu", SECRET),
        "dingtalk": bot("dingtalk", SECRET),
        "wecom": bot("wecom"),
        "slack": bot("slack"),
        "webhook": bot("webhook", SECRET),
    }
    env = {f"{kind.upper()}_URL": b.url for kind, b in bots.items()} | {"SIGN": SECRET}
    config = {
        kind: {"kind": kind, "url": f"${{{kind.upper()}_URL}}"}
        | ({"secret": "${SIGN}"} if b.secret else {})
        for kind, b in bots.items()
    }
    deliveries = await notify(settings(**config), NOTE, environ=env)
    assert [(d.channel, d.sent, d.tries) for d in deliveries] == [
        (kind, True, 1) for kind in bots
    ], [d.line() for d in deliveries]
    for kind, b in bots.items():
        assert b.problems == [], kind
        assert len(b.accepted) == 1, kind
        assert "workspace-agent" in b.accepted[0].text()
    card = bots["feishu"].accepted[0].body["card"]
    assert card["header"]["template"] == "red"
    assert any(e["tag"] == "action" for e in card["elements"])  # the dashboard button
    slack = bots["slack"].accepted[0].body
    assert "*workspace-agent*" in json.dumps(slack)  # **bold** as Slack's *bold*


async def test_a_wrong_secret_is_refused_by_feishu_dingtalk_and_the_webhook_and_not_retried(bot):
    bots = {kind: bot(kind, SECRET) for kind in ("feishu", "dingtalk", "webhook")}
    config = {
        kind: {"kind": kind, "url": b.url, "secret": "not-the-secret"} for kind, b in bots.items()
    }
    deliveries = await notify(settings(**config), NOTE, environ={})
    assert [d.sent for d in deliveries] == [False, False, False]
    assert [d.tries for d in deliveries] == [1, 1, 1]
    reasons = {d.channel: d.reason for d in deliveries}
    assert reasons["feishu"].startswith("code 19021")
    assert reasons["dingtalk"].startswith("errcode 310000")
    assert reasons["webhook"].startswith("HTTP 401")
    for kind, b in bots.items():
        assert b.problems and "signature" in b.problems[0], kind


async def test_the_webhook_signature_covers_the_body(bot):
    hook = bot("webhook", SECRET)
    [delivery] = await notify(
        settings(hook={"kind": "webhook", "url": hook.url, "secret": SECRET}), NOTE
    )
    assert delivery.sent and hook.problems == []
    seen = hook.accepted[0]
    assert seen.body["event"] == "gate_failed" and seen.body["facts"][0] == {
        "name": "suite",
        "value": "workspace-agent",
    }
    assert seen.body["sent_at"].endswith("Z")
    # The same body with one byte changed no longer matches the signature it came with.
    from tests.notify.bots import _webhook_signature

    tampered = type(seen)(seen.path, seen.query, seen.headers, seen.raw.replace(b"r1", b"r2"), None)
    assert _webhook_signature(tampered, SECRET) != ""
    assert _webhook_signature(seen, SECRET) == ""


async def test_an_unsigned_webhook_sends_no_signature_header(bot):
    hook = bot("webhook")
    [delivery] = await notify(settings(hook={"kind": "webhook", "url": hook.url}), NOTE)
    assert delivery.sent
    assert "X-Seatrial-Signature" not in hook.accepted[0].headers


async def test_a_server_answering_500_then_200_gets_two_tries_and_one_message(bot):
    slack = bot("slack", script=[(500, "internal error", {})])
    [delivery] = await notify(settings(team={"kind": "slack", "url": slack.url}), NOTE)
    assert (delivery.sent, delivery.tries, delivery.status) == (True, 2, 200)
    assert len(slack.requests) == 2 and len(slack.accepted) == 1


async def test_429_with_retry_after_and_a_bots_too_fast_code_are_retried(bot):
    slack = bot("slack", script=[(429, "rate_limited", {"Retry-After": "0"})])
    ding = bot("dingtalk", script=[(200, {"errcode": 130101, "errmsg": "send too fast"}, {})])
    wecom = bot("wecom", script=[(200, {"errcode": 45009, "errmsg": "api freq out of limit"}, {})])
    feishu = bot("feishu", script=[(200, {"code": 11232, "msg": "frequency limited"}, {})])
    config = {b.kind: {"kind": b.kind, "url": b.url} for b in (slack, ding, wecom, feishu)}
    deliveries = await notify(settings(**config), NOTE)
    assert [(d.channel, d.sent, d.tries) for d in deliveries] == [
        ("slack", True, 2),
        ("dingtalk", True, 2),
        ("wecom", True, 2),
        ("feishu", True, 2),
    ]


async def test_a_refused_error_code_is_not_retried(bot):
    wecom = bot("wecom", script=[(200, {"errcode": 93000, "errmsg": "invalid webhook url"}, {})])
    [delivery] = await notify(settings(team={"kind": "wecom", "url": wecom.url}), NOTE)
    assert (delivery.sent, delivery.tries) == (False, 1)
    assert delivery.reason == "errcode 93000: invalid webhook url"


async def test_retries_stop_after_the_configured_count(refused_port):
    port = refused_port
    config = AlertSettings.model_validate(
        {
            "channels": {"team": {"kind": "slack", "url": f"http://127.0.0.1:{port}/hook"}},
            "retries": 2,
            "backoff_s": 0,
        }
    )
    [delivery] = await notify(config, NOTE)
    assert (delivery.sent, delivery.tries, delivery.status) == (False, 3, None)
    assert delivery.reason.startswith("cannot connect")


async def test_quiet_hours_send_nothing_and_say_so(bot):
    slack = bot("slack")
    config = AlertSettings.model_validate(
        {
            "channels": {"team": {"kind": "slack", "url": slack.url}},
            "quiet_hours": "22:00-08:00",
            "timezone": "Asia/Shanghai",
        }
    )
    night = dt.datetime(2026, 12, 1, 15, 30, tzinfo=dt.UTC)  # 23:30 in Shanghai
    [quiet] = await notify(config, NOTE, now=night)
    assert (quiet.sent, quiet.tries) == (False, 0)
    assert quiet.reason == "quiet hours (22:00-08:00 Asia/Shanghai)"
    assert slack.requests == []
    morning = dt.datetime(2026, 12, 2, 0, 0, tzinfo=dt.UTC)  # 08:00 in Shanghai: the end
    [sent] = await notify(config, NOTE, now=morning)
    assert sent.sent and len(slack.accepted) == 1


def test_quiet_hours_wrap_midnight_and_end_before_their_last_minute():
    config = AlertSettings(quiet_hours="22:00-08:00")
    at = lambda h, m: dt.datetime(2026, 12, 1, h, m, tzinfo=dt.UTC)  # noqa: E731
    assert [config.quiet_at(at(h, m)) for h, m in ((21, 59), (22, 0), (3, 0), (7, 59), (8, 0))] == [
        False,
        True,
        True,
        True,
        False,
    ]
    day = AlertSettings(quiet_hours="12:00-13:00")
    assert (day.quiet_at(at(12, 30)), day.quiet_at(at(13, 0)), day.quiet_at(at(23, 0))) == (
        True,
        False,
        False,
    )


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("22-08", "HH:MM-HH:MM"),
        ("25:00-08:00", "HH:MM-HH:MM"),
        ("08:00-08:00", "same minute"),
    ],
)
def test_quiet_hours_that_are_not_a_span_are_refused(written, said):
    with pytest.raises(ValueError, match=said):
        AlertSettings(quiet_hours=written)


def test_an_unknown_time_zone_is_refused():
    with pytest.raises(ValueError, match="IANA"):
        AlertSettings(timezone="Mars/Olympus")


async def test_a_missing_variable_names_the_key_and_variable_never_a_value(bot):
    slack = bot("slack")
    config = settings(
        team={"kind": "slack", "url": slack.url},
        lark={"kind": "feishu", "url": "${LARK_URL}", "secret": "${LARK_SECRET}"},
    )
    with pytest.raises(ConfigError) as caught:
        await notify(config, NOTE, environ={"LARK_URL": "https://open.feishu.cn/hook/abc123"})
    message = str(caught.value)
    assert "alerts.channels.lark.secret" in message and "LARK_SECRET" in message
    assert "abc123" not in message and slack.token not in message
    assert slack.requests == []  # nothing is sent while the configuration is wrong


async def test_a_secret_echoed_by_the_platform_never_reaches_the_delivery(bot):
    hook = bot("webhook", SECRET)
    hook.script.append((400, {"error": f"bad request to {hook.url} with {SECRET}"}, {}))
    [delivery] = await notify(
        settings(hook={"kind": "webhook", "url": hook.url, "secret": SECRET}), NOTE
    )
    assert not delivery.sent
    assert SECRET not in delivery.reason and hook.token not in delivery.reason
    assert "***" in delivery.reason


async def test_only_channels_that_receive_the_event_get_it(bot):
    gates, daily = bot("slack"), bot("wecom")
    config = settings(
        gates={"kind": "slack", "url": gates.url, "events": ["gate_failed"]},
        daily={"kind": "wecom", "url": daily.url, "events": ["daily_report"]},
    )
    deliveries = await notify(config, NOTE)
    assert [d.channel for d in deliveries] == ["gates"]
    assert len(gates.accepted) == 1 and daily.requests == []


async def test_a_message_carrying_two_events_reaches_each_channel_of_either_once(bot):
    both = dataclasses.replace(NOTE, also=("metric_drop",))
    gates, drops, hook, daily = bot("slack"), bot("dingtalk"), bot("webhook"), bot("wecom")
    config = settings(
        gates={"kind": "slack", "url": gates.url, "events": ["gate_failed"]},
        drops={"kind": "dingtalk", "url": drops.url, "events": ["metric_drop"]},
        hook={"kind": "webhook", "url": hook.url, "events": ["gate_failed", "metric_drop"]},
        daily={"kind": "wecom", "url": daily.url, "events": ["daily_report"]},
    )
    deliveries = await notify(config, both)
    assert [d.channel for d in deliveries] == ["gates", "drops", "hook"]
    assert [len(b.requests) for b in (gates, drops, hook, daily)] == [1, 1, 1, 0]
    [seen] = hook.accepted
    assert hook.problems == []
    assert seen.body["event"] == "gate_failed"
    assert seen.body["events"] == ["gate_failed", "metric_drop"]
    assert seen.headers["X-Seatrial-Event"] == "gate_failed"


async def test_named_channels_get_a_message_whatever_their_events(bot):
    daily = bot("wecom")
    config = settings(daily={"kind": "wecom", "url": daily.url, "events": ["daily_report"]})
    [delivery] = await notify(config, NOTE, channels=["daily"])
    assert delivery.sent
    with pytest.raises(ConfigError, match="no channel nope"):
        await notify(config, NOTE, channels=["nope"])


def test_a_secret_on_a_bot_that_does_not_sign_is_refused():
    with pytest.raises(ValueError, match="not signed"):
        settings(team={"kind": "slack", "url": "${SLACK_URL}", "secret": "${X}"})


def test_errors_in_the_alerts_section_name_the_line_but_never_a_url_or_secret(tmp_path):
    from seatrial.config import load_config

    (tmp_path / "seatrial.yaml").write_text(
        "alerts:\n  channels:\n    eng:\n      kind: slack\n"
        "      url: https://hooks.slack.com/services/T0/B0/LITERALKEY1\n"
        "      secret: LITERALSIGNING\n"
        "    bad: {kind: teams, url: 'https://x.test/LITERALKEY2'}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert "seatrial.yaml:3" in message and "not signed" in message
    assert "seatrial.yaml:7" in message and "teams" in message
    assert not any(s in message for s in ("LITERALKEY1", "LITERALSIGNING", "LITERALKEY2"))
