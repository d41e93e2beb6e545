"""Running each kind of scheduled job for real: suites with an in-process agent, a tier, and
the daily report sent to a webhook on loopback."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from seatrial.config import Config, load_config
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import current_language
from seatrial.schedule import Scheduler, run_job
from seatrial.store import Store
from tests.conftest import agent_spec

DUE = dt.datetime(2026, 12, 2, 1, 0, tzinfo=dt.UTC)  # 09:00 on Dec 2 in Shanghai

PASSING = """\
suite: greeting
agent: {agent}
cases:
  - id: echoes
    input: hello
    assertions: [{{type: contains, value: "you said"}}]
"""

FAILING = """\
suite: refunds
agent: {agent}
cases:
  - id: refunds
    priority: P0
    input: refund my order
    assertions: [{{type: contains, value: "refund issued"}}]
"""
"""A P0 case the echo agent fails: the built-in gate (every P0 case passes) is not met."""


def project(root: Path, config: str, **suites: str) -> Config:
    (root / "suites").mkdir(exist_ok=True)
    for name, text in suites.items():
        (root / "suites" / f"{name}.yaml").write_text(text, encoding="utf-8")
    (root / "seatrial.yaml").write_text("project: sched\n" + config, encoding="utf-8")
    return load_config(root)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def tags_of(store: Store, run_id: str) -> list[str]:
    return list(store.get_run(run_id).tags)


async def test_a_suites_job_runs_each_suite_tagged_and_fails_on_an_unmet_gate(
    tmp_path: Path, store: Store
) -> None:
    echo = agent_spec("echo")
    config = project(
        tmp_path,
        "schedules:\n  - {name: hourly, cron: '0 * * * *', suites: [suites/]}\n",
        a_greeting=PASSING.format(agent=echo),
        b_refunds=FAILING.format(agent=echo),
    )
    [schedule] = config.schedules
    outcome = await run_job(config, schedule, store, DUE)
    assert (outcome.status, outcome.error, len(outcome.run_ids)) == ("failed", None, 2)
    suites = [store.get_run(run_id).suite for run_id in outcome.run_ids]
    assert suites == ["greeting", "refunds"]
    assert all("schedule:hourly" in tags_of(store, run_id) for run_id in outcome.run_ids)


async def test_a_suites_job_whose_gates_are_met_is_ok(tmp_path: Path, store: Store) -> None:
    config = project(
        tmp_path,
        "schedules:\n  - {name: hourly, cron: '0 * * * *', suites: [suites/greeting.yaml]}\n",
        greeting=PASSING.format(agent=agent_spec("echo")),
    )
    outcome = await run_job(config, config.schedules[0], store, DUE)
    assert (outcome.status, outcome.error, len(outcome.run_ids)) == ("ok", None, 1)


async def test_a_job_that_cannot_finish_is_an_error_keeping_the_runs_it_made(
    tmp_path: Path, store: Store
) -> None:
    config = project(
        tmp_path,
        "schedules:\n  - {name: hourly, cron: '0 * * * *', suites: [suites/]}\n",
        a_greeting=PASSING.format(agent=agent_spec("echo")),
        b_broken=PASSING.format(agent=f"python:{tmp_path / 'missing.py'}:answer"),
    )
    outcome = await run_job(config, config.schedules[0], store, DUE)
    assert outcome.status == "error"
    assert len(outcome.run_ids) == 1
    assert outcome.error is not None and "missing.py" in outcome.error


async def test_a_tier_job_runs_the_tier_tagged_with_the_schedule(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("GITHUB_REF_NAME", "GITHUB_HEAD_REF", "GITHUB_BASE_REF", "GITHUB_SHA"):
        monkeypatch.delenv(variable, raising=False)
    config = project(
        tmp_path,
        f"db: sqlite:///{tmp_path / 'seatrial.db'}\n"
        "tiers:\n  nightly: {suites: [suites/greeting.yaml], repeats: 2}\n"
        "schedules:\n  - {name: nightly, cron: '0 2 * * *', tier: nightly, agent: "
        f"'{agent_spec('echo')}'}}\n",
        greeting=PASSING.format(agent="python:nowhere.py:f"),
    )
    outcome = await run_job(config, config.schedules[0], store, DUE, db=config.db)
    assert (outcome.status, outcome.error, len(outcome.run_ids)) == ("ok", None, 1)
    tags = tags_of(store, outcome.run_ids[0])
    assert {"schedule:nightly", "tier:nightly"} <= set(tags)
    counts = store.verdict_counts([outcome.run_ids[0]])[outcome.run_ids[0]]
    assert counts == {"PASS": 2}  # the tier's repeats, the schedule's agent


class Webhook(BaseHTTPRequestHandler):
    """Records each POST's JSON body on the server."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append(json.loads(body))  # type: ignore[attr-defined]
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    server.bodies = []  # type: ignore[attr-defined]
    server.status = 200  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def report_config(tmp_path: Path, server: ThreadingHTTPServer) -> Config:
    return project(
        tmp_path,
        "alerts:\n  retries: 0\n  channels:\n"
        "    team: {kind: webhook, url: '${SCHED_HOOK}', events: [daily_report]}\n"
        "schedules:\n  - {name: daily, cron: '0 9 * * *', timezone: Asia/Shanghai, "
        "report: daily}\n",
    )


async def test_the_daily_report_job_sends_the_day_before_in_the_schedules_zone(
    tmp_path: Path,
    store: Store,
    webhook: ThreadingHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHED_HOOK", f"http://127.0.0.1:{webhook.server_port}/hook")
    config = report_config(tmp_path, webhook)
    outcome = await run_job(config, config.schedules[0], store, DUE)
    assert (outcome.status, outcome.error, outcome.run_ids) == ("ok", None, ())
    [body] = webhook.bodies  # type: ignore[attr-defined]
    assert body["event"] == "daily_report"
    assert "2026-12-01" in body["title"]  # Dec 2, 09:00 Shanghai: the report of Dec 1


async def test_a_daily_report_the_channel_refuses_is_an_error_naming_it(
    tmp_path: Path,
    store: Store,
    webhook: ThreadingHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    webhook.status = 500  # type: ignore[attr-defined]
    monkeypatch.setenv("SCHED_HOOK", f"http://127.0.0.1:{webhook.server_port}/hook")
    config = report_config(tmp_path, webhook)
    outcome = await run_job(config, config.schedules[0], store, DUE)
    assert outcome.status == "error"
    assert outcome.error is not None and "team: not sent" in outcome.error
    assert "SCHED_HOOK" not in outcome.error and str(webhook.server_port) not in outcome.error


def test_a_daily_report_schedule_without_a_channel_for_it_is_refused(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHED_HOOK", "http://127.0.0.1:9/hook")
    config = project(
        tmp_path,
        "alerts:\n  channels:\n"
        "    team: {kind: webhook, url: '${SCHED_HOOK}', events: [gate_failed]}\n"
        "schedules:\n  - {name: daily, cron: '0 9 * * *', report: daily}\n",
    )
    with pytest.raises(ConfigError, match="no channel of `alerts:` receives `daily_report`"):
        Scheduler(config, store)


def test_a_server_with_schedules_refuses_to_start_without_an_alert_secret(
    tmp_path: Path, store: Store, webhook: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCHED_HOOK", raising=False)
    config = report_config(tmp_path, webhook)
    with pytest.raises(ConfigError, match="SCHED_HOOK"):
        Scheduler(config, store)
    monkeypatch.setenv("SCHED_HOOK", f"http://127.0.0.1:{webhook.server_port}/hook")
    Scheduler(config, store)  # set: it starts


async def test_the_daily_report_job_writes_in_the_language_of_seatrial_lang(
    tmp_path: Path,
    store: Store,
    webhook: ThreadingHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHED_HOOK", f"http://127.0.0.1:{webhook.server_port}/hook")
    monkeypatch.setenv("SEATRIAL_LANG", "zh")
    config = report_config(tmp_path, webhook)
    outcome = await run_job(config, config.schedules[0], store, DUE)
    assert outcome.status == "ok"
    [body] = webhook.bodies  # type: ignore[attr-defined]
    assert body["title"] == "Seatrial 日报 2026-12-01"
    assert body["text"].startswith("2026-12-01（")
    assert {"name": "运行数", "value": "0"} in body["facts"]
    assert current_language() == "en"  # the job's language ended with it


def test_a_scheduler_refuses_a_seatrial_lang_it_does_not_speak_before_it_starts(
    tmp_path: Path, store: Store, webhook: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHED_HOOK", f"http://127.0.0.1:{webhook.server_port}/hook")
    monkeypatch.setenv("SEATRIAL_LANG", "fr")
    config = report_config(tmp_path, webhook)
    with pytest.raises(InputError, match="SEATRIAL_LANG 'fr' is not a language"):
        Scheduler(config, store)
