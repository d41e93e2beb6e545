"""The daily report over a day's runs, on SQLite and PostgreSQL: pass rates against each
suite's previous run, new failures, clusters, cost; its Markdown and HTML."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

import pytest

from seatrial.case import Case
from seatrial.i18n import use_language
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.report import (
    daily_html_body,
    daily_report,
    render_daily_html,
    render_daily_markdown,
    write_daily_report,
)
from seatrial.store import ModelCallRow, Store
from tests.store import conftest as databases

# The store fixtures of tests/store, so that every test here runs on SQLite and PostgreSQL.
backend = databases.backend
db_url = databases.db_url
pg_schemas = databases.pg_schemas
pg_session_url = databases.pg_session_url
pg_user = databases.pg_user
store = databases.store

DAY = dt.date(2026, 3, 10)
UTC = dt.UTC
LOOP = (
    "no_loop: `lookup_order` failed {n} times with the same arguments "
    '{{"order_id": "A1O01"}} (KeyError); a failing call may be repeated at most once'
)
DENIED = (
    "permissions_respected: `refund_order` was denied "
    "(scope deny, permissions.refund_order is deny)"
)


def at(day: dt.date, hour: int, minute: int = 0, tz: dt.tzinfo = UTC) -> float:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=tz).timestamp()


def attempt(run_id: str, case_id: str, number: int, reason: str = "", cost: float = 0.0):
    failed = bool(reason)
    return AttemptRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=number,
        verdict="FAIL" if failed else "PASS",
        failure_type=reason.split(":")[0]
        .replace("no_loop", "loop")
        .replace("permissions_respected", "permission_violation")
        if failed
        else None,
        reason=reason or "all 1 assertions passed",
        response="sorry, that did not work" if failed else "done",
        metrics=Metrics(cost_usd=cost),
    )


def store_run(
    store: Store,
    suite: str,
    started_at: float,
    outcomes: dict[str, list[str]],
    agent: str = "python:agent.py:support",
) -> str:
    """A finished run whose cases have these attempt reasons ("" passes)."""
    run_id = f"{suite}-{uuid.uuid4().hex[:8]}"
    info = RunInfo(run_id=run_id, suite=suite, agent=agent, started_at=started_at)
    store.create_run(info, [Case(id=case_id, input="hi") for case_id in outcomes])
    store.save_attempts(
        [
            attempt(run_id, case_id, number, reason, cost=0.01)
            for case_id, reasons in outcomes.items()
            for number, reason in enumerate(reasons, start=1)
        ]
    )
    store.finish_run(run_id, "finished", started_at + 60)
    return run_id


@pytest.fixture
def day(store: Store) -> dict[str, str]:
    """Yesterday's support run (all passing), today's support run (a new failure, an old one),
    today's first billing run, and a support run the next day."""
    before = store_run(
        store,
        "support",
        at(DAY - dt.timedelta(days=1), 9),
        {"refund": ["", ""], "lookup": [LOOP.format(n=4), LOOP.format(n=5)], "hello": ["", ""]},
    )
    today = store_run(
        store,
        "support",
        at(DAY, 10),
        {
            "refund": [DENIED, DENIED],
            "lookup": [LOOP.format(n=4), LOOP.format(n=6)],
            "hello": ["", ""],
        },
    )
    billing = store_run(store, "billing", at(DAY, 23, 30), {"invoice": ["", ""]})
    after = store_run(store, "support", at(DAY + dt.timedelta(days=1), 8), {"hello": [""]})
    store.record_model_calls(
        [
            ModelCallRow(run_id=today, purpose="agent", model="m", cost_usd=0.25),
            ModelCallRow(run_id=today, purpose="judge", model="j", cost_usd=0.05),
            ModelCallRow(run_id=after, purpose="agent", model="m", cost_usd=9.0),
        ]
    )
    return {"before": before, "today": today, "billing": billing, "after": after}


def test_the_daily_report_compares_each_run_with_its_suites_previous_run(store, day):
    report = daily_report(store, DAY, tz=UTC)

    assert [run.info.run_id for run in report.runs] == [day["billing"], day["today"]]
    billing, support = report.runs
    assert billing.pass_rate == 1.0 and billing.previous_id is None and billing.delta is None
    assert support.previous_id == day["before"]
    assert support.pass_rate == pytest.approx(2 / 6)
    assert support.previous_pass_rate == pytest.approx(4 / 6)
    assert support.delta == pytest.approx(-2 / 6)
    # refund passed yesterday and fails today; lookup failed both days, so it is not new.
    assert [(f.case_id, f.verdict, f.failure_types) for f in support.new_failures] == [
        ("refund", "FAIL", ("permission_violation",))
    ]
    assert (report.attempts, report.passes) == (8, 4)


def test_the_daily_report_clusters_the_days_failures_and_sums_their_cost(store, day):
    report = daily_report(store, DAY, tz=UTC)

    assert [(c.failure_type, c.count, c.cases) for c in report.clusters] == [
        ("loop", 2, ("lookup",)),
        ("permission_violation", 2, ("refund",)),
    ]
    # The next day's 9 dollars are not today's.
    assert report.spend == {"agent": 0.25, "judge": 0.05, "generation": 0.0}
    assert report.cost_usd == pytest.approx(0.08)


def test_the_day_is_counted_in_the_time_zone_asked_for(store, day):
    beijing = dt.timezone(dt.timedelta(hours=8))
    # 23:30 UTC on the 10th is 07:30 on the 11th in Beijing; 10:00 UTC is 18:00 on the 10th.
    on_the_10th = daily_report(store, DAY, tz=beijing)
    on_the_11th = daily_report(store, DAY + dt.timedelta(days=1), tz=beijing)

    assert [run.info.run_id for run in on_the_10th.runs] == [day["today"]]
    assert [run.info.run_id for run in on_the_11th.runs] == [day["billing"], day["after"]]


def test_a_day_without_runs_says_so(store, day):
    report = daily_report(store, DAY + dt.timedelta(days=5), tz=UTC)

    assert report.runs == [] and report.clusters == []
    assert "No run started that day." in render_daily_markdown(report)
    assert 'id="no-runs"' in daily_html_body(report)


def test_the_markdown_report_shows_rates_changes_new_failures_clusters_and_cost(store, day):
    text = render_daily_markdown(daily_report(store, DAY, tz=UTC))

    assert text.startswith("# Seatrial daily report 2026-03-10\n")
    assert "2 runs of 2 suites started on 2026-03-10 (UTC): 8 attempts, 50% passed" in text
    assert f"| support | `{day['today']}` | python:agent.py:support | 6 | 33% | 67% " in text
    assert "-33.3 pts" in text
    assert "| support | refund | FAIL | permission_violation |" in text
    assert "| loop | 2 | 1 | no_loop failed on `lookup_order`" in text
    assert "| agent model calls (ledger) | 0.2500 |" in text


def test_the_html_report_escapes_every_stored_value(store):
    store_run(
        store,
        "<script>alert(1)</script>",
        at(DAY, 9),
        {"<b>case</b>": ["format: <img src=x onerror=alert(1)> is not JSON"]},
        agent="http://agent/<script>",
    )

    page = render_daily_html(daily_report(store, DAY, tz=UTC))

    assert "<script>" not in page and "<img" not in page and "<b>case" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.startswith("<!doctype html>") and "</html>" in page


def test_the_markdown_report_keeps_html_from_the_store_inert_under_a_real_renderer(store):
    from markdown_it import MarkdownIt

    store_run(
        store,
        "客服 <script>alert(1)</script>",
        at(DAY, 9),
        {"<b>case</b>": ["format: <img src=x onerror=alert(1)> 不是 JSON"]},
    )
    text = render_daily_markdown(daily_report(store, DAY, tz=UTC))
    rendered = MarkdownIt("commonmark").enable("table").render(text)

    assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered
    assert "&lt;img src=x onerror=alert(1)&gt; 不是 JSON" in rendered
    assert "客服 &lt;script&gt;" in rendered and "<table>" in rendered


def test_the_report_files_are_written_as_markdown_and_html(store, day, tmp_path: Path):
    report = daily_report(store, DAY, tz=UTC)

    written = write_daily_report(report, tmp_path / "out")

    assert [p.name for p in written] == ["daily-2026-03-10.md", "daily-2026-03-10.html"]
    assert written[0].read_text(encoding="utf-8") == render_daily_markdown(report)
    assert 'id="failure-clusters"' in written[1].read_text(encoding="utf-8")


def test_for_a_chinese_reader_the_markdown_report_is_chinese_with_ids_as_written(store, day):
    with use_language("zh_CN"):
        text = render_daily_markdown(daily_report(store, DAY, tz=UTC))

    assert text.startswith("# Seatrial 日报 2026-03-10\n")
    assert "2026-03-10（UTC）：2 个用例集共 2 次运行，8 次执行，通过率 50%" in text
    assert "| 用例集 | 运行 | 智能体 | 执行次数 | 通过率 | 上一次运行 | 变化 |" in text
    assert f"| 67%（`{day['before']}`） | -33.3 个百分点（在噪声范围内） |" in text
    assert "## 新增失败" in text
    assert "| support | refund | 失败 | 越权（permission_violation） |" in text
    assert "## 失败聚类" in text and "| 死循环（loop） | 2 | 1 |" in text
    assert "| agent 模型调用（费用台账） | 0.2500 |" in text
    for english in ("Pass rates", "New failures", "Failure clusters", "passed", "pts", "FAIL"):
        assert english not in text, english


def test_the_change_says_within_noise_in_english_too(store, day):
    text = render_daily_markdown(daily_report(store, DAY, tz=UTC))

    assert f"| 67% (`{day['before']}`) | -33.3 pts (within noise) |" in text


def test_a_change_the_attempts_can_tell_from_chance_is_more_than_noise(store):
    many = 40
    store_run(store, "big", at(DAY - dt.timedelta(days=1), 9), {f"c{i}": [""] for i in range(many)})
    store_run(
        store,
        "big",
        at(DAY, 9),
        {f"c{i}": ["" if i < 10 else LOOP.format(n=3)] for i in range(many)},
    )

    report = daily_report(store, DAY, tz=UTC)
    (run,) = report.runs

    assert run.beyond_noise is True
    assert "-75.0 pts (more than noise)" in render_daily_markdown(report)
    with use_language("zh_CN"):
        assert "-75.0 个百分点（超出噪声范围）" in render_daily_markdown(report)


def test_for_a_chinese_reader_the_html_page_is_chinese_and_says_so(store, day):
    with use_language("zh_CN"):
        page = render_daily_html(daily_report(store, DAY, tz=UTC))
    english = render_daily_html(daily_report(store, DAY, tz=UTC))

    assert '<html lang="zh-CN">' in page and "<title>Seatrial 日报 2026-03-10</title>" in page
    assert "<h2>新增失败</h2>" in page and "<th>上一次运行</th>" in page
    assert '<html lang="en">' in english and "<h2>New failures</h2>" in english
