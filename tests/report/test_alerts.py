"""What runs, drift and the daily report say in chat alerts: which alerts a run raises, and a
pass-rate drop that alerts only when the statistics support it."""

from __future__ import annotations

import datetime as dt

from seatrial.case import Case, GateSpec
from seatrial.compare import CaseOutcome, RunData, gate_settings, probe_drift
from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.i18n import use_language
from seatrial.record import AttemptRecord, RunInfo
from seatrial.report import (
    build_report,
    daily_notification,
    daily_report,
    drift_notification,
    metric_drop_notification,
    pass_rate_drops,
    run_notifications,
)
from tests.compare.test_drift import run_demo_agent
from tests.report.test_daily import at, store_run

DASHBOARD = "https://seatrial.example.com"


def run_of(run_id: str, categories: dict[str, tuple[int, int]]) -> RunData:
    """A run whose cases in each category passed ``passes`` of ``attempts`` attempts."""
    cases = []
    for category, (passes, attempts) in categories.items():
        for i in range(attempts):
            cases.append(
                CaseOutcome(
                    case_id=f"{category}-{i}",
                    name="",
                    category=category,
                    priority="P1",
                    tags=(),
                    verdicts=("PASS",) if i < passes else ("FAIL",),
                    failure_types=(None,) if i < passes else ("loop",),
                    wall_time_ms=(1.0,),
                    tokens=(1,),
                    cost_usd=(0.0,),
                    tool_calls=(1,),
                )
            )
    info = RunInfo(run_id=run_id, suite="workspace-agent", agent="v2")
    return RunData(info=info, cases=tuple(cases))


def test_a_three_point_drop_over_a_thousand_attempts_is_significant():
    [drop] = pass_rate_drops(run_of("base", {"": (960, 1000)}), run_of("cand", {"": (930, 1000)}))
    assert drop.name == "task success" and drop.significant
    assert drop.change_high < 0
    assert drop.line().startswith("**task success** 96% -> 93% (-3.0 pts")


def test_the_same_drop_over_a_hundred_attempts_lies_inside_the_interval():
    [drop] = pass_rate_drops(run_of("base", {"": (96, 100)}), run_of("cand", {"": (93, 100)}))
    assert not drop.significant and drop.change_low < 0 < drop.change_high


def test_a_category_can_drop_significantly_while_the_whole_run_does_not():
    base = run_of("base", {"read_only": (50, 50), "write": (40, 50)})
    cand = run_of("cand", {"read_only": (35, 50), "write": (50, 50)})
    drops = {drop.name: drop for drop in pass_rate_drops(base, cand)}
    assert drops["category read_only"].significant  # 100% -> 70%
    assert not drops["task success"].significant  # 90% -> 85%
    assert "category write" not in drops  # it rose


def test_a_rise_or_an_equal_rate_is_no_drop():
    same = run_of("base", {"": (9, 10)})
    assert pass_rate_drops(same, run_of("cand", {"": (9, 10)})) == []
    assert pass_rate_drops(same, run_of("cand", {"": (10, 10)})) == []


def test_a_run_that_failed_its_gates_and_dropped_sends_one_alert_carrying_both(store):
    v1 = run_demo_agent(store, "v1")
    baseline = {"baseline": {"ref": v1, "run_id": v1}}
    v2 = run_demo_agent_with(store, "v2", baseline)
    report = build_report(store, v2)
    [alert] = run_notifications(store, report, DASHBOARD)
    assert alert.events == ("gate_failed", "metric_drop")
    assert alert.title.startswith("Seatrial: workspace-agent failed its gates; task success 100%")
    assert alert.link == f"{DASHBOARD}/runs/{v2}" and ("run", v2) in alert.facts
    assert "UNMET" in alert.text and "read-missing-config" in alert.text
    assert f"**Pass rates fell against `{v1}`** ([compare]({DASHBOARD}/compare?" in alert.text
    assert "**task success** 100% -> " in alert.text


def test_a_run_that_met_its_gates_but_dropped_sends_metric_drop_alone(store):
    base = _stored(store, "base", {f"c{i}": "PASS" for i in range(40)}, agent="previous")
    dropped = {f"c{i}": "PASS" if i < 20 else "FAIL" for i in range(40)}
    cand = _stored(store, "cand", dropped, baseline=base, gates=[GateSpec(min_pass_rate=0.4)])
    [alert] = run_notifications(store, build_report(store, cand), DASHBOARD)
    assert alert.events == ("metric_drop",)
    assert alert.title == "Seatrial: s task success 100% -> 50%"
    assert alert.link == f"{DASHBOARD}/compare?base=base&cand=cand"


def test_a_run_that_met_its_gates_and_held_its_rate_raises_nothing(store):
    v1 = run_demo_agent(store, "v1")
    again = run_demo_agent_with(store, "v1", {"baseline": {"ref": v1, "run_id": v1}})
    assert run_notifications(store, build_report(store, again), DASHBOARD) == []


def test_a_run_without_a_baseline_raises_no_metric_drop(store):
    v2 = run_demo_agent(store, "v2")
    [only] = run_notifications(store, build_report(store, v2))
    assert only.events == ("gate_failed",) and only.link is None


def test_without_a_baseline_the_alert_lists_each_failing_case_and_why(store):
    v2 = run_demo_agent(store, "v2")
    [alert] = run_notifications(store, build_report(store, v2))
    listed = alert.text.split("**Failing cases (3)**\n", 1)[1].splitlines()
    for case, failure in EXPECTED_V2_FAILURES.items():
        [line] = [item for item in listed if item.startswith(f"- {case} FAIL ({failure}): `")]
        assert len(line) > len(f"- {case} FAIL ({failure}): ``")  # the reason is there


def test_a_failing_cases_reason_cannot_mention_anyone_or_carry_a_tag(store):
    reasons = {f"c{i}": "FAIL" for i in range(12)}
    run_id = _stored(store, "r", reasons, reason='<at user_id="all"></at> <!channel> `x`')
    [alert] = run_notifications(store, build_report(store, run_id))
    assert "<" not in alert.text and ">" not in alert.text
    assert "- c0 FAIL (loop): `‹at user_id=\"all\"›‹/at› ‹!channel› 'x'`" in alert.text
    # No gate was written: the message says which gate failed, and lists 10 of 12 cases.
    assert "No gate configured: every case must pass." in alert.text
    assert "**Failing cases (12)**" in alert.text and "- ... and 2 more" in alert.text


def test_no_significant_drop_means_no_metric_drop_alert():
    base, cand = run_of("base", {"": (96, 100)}), run_of("cand", {"": (93, 100)})
    report = None  # the report is not read when nothing is significant
    assert metric_drop_notification(report, pass_rate_drops(base, cand)) is None


def test_a_drift_alarm_names_the_probe_the_case_and_what_moved(store):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent(store, "v2")
    note = drift_notification(probe_drift(store, v2, v1), DASHBOARD)
    assert note.event == "drift" and "workspace-agent" in note.title
    assert "read-missing-config" in note.text and "tool sequence moved" in note.text
    assert note.link == f"{DASHBOARD}/compare?base={v1}&cand={v2}"


def test_the_daily_message_carries_the_headline_runs_and_new_failures(store):
    day = dt.date(2026, 3, 10)
    store_run(store, "support", at(day - dt.timedelta(days=1), 9), {"refund": [""], "hi": [""]})
    today = store_run(store, "support", at(day, 10), {"refund": ["no_loop: again"], "hi": [""]})
    note = daily_notification(daily_report(store, day, tz=dt.UTC), DASHBOARD)
    assert note.event == "daily_report" and note.title == "Seatrial daily report 2026-03-10"
    assert f"support `{today}`: 50% (-50.0 pts" in note.text
    assert "support: refund FAIL (loop)" in note.text
    assert note.link == f"{DASHBOARD}/daily?date=2026-03-10"
    assert ("new failures", "1") in note.facts


def run_demo_agent_with(store, version: str, settings: dict) -> str:
    """The demo suite run in-process with ``settings`` stored (a baseline), as `seatrial run
    --baseline` stores it."""
    import asyncio

    from seatrial.agent import resolve_agent
    from seatrial.case import load_suite
    from seatrial.demo._demo import PROJECT, SUITE
    from seatrial.run import RunOptions, run_suite_async

    async def go() -> str:
        adapter = resolve_agent(f"python:seatrial.demo.agents:{version}", base_dir=PROJECT)
        try:
            options = RunOptions(repeats=3, settings=dict(settings))
            outcome = await run_suite_async(load_suite(SUITE), adapter, store, options, None)
        finally:
            await adapter.aclose()
        return outcome.run_id

    return asyncio.run(go())


def _stored(
    store,
    run_id: str,
    verdicts: dict[str, str],
    *,
    agent: str = "a",
    baseline: str | None = None,
    gates: list[GateSpec] | None = None,
    reason: str = "wrong",
) -> str:
    """A finished run of suite ``s`` with these case verdicts, its baseline and gates."""
    settings = gate_settings(gates, "file:gates.yaml") if gates else {}
    if baseline is not None:
        settings["baseline"] = {"ref": baseline, "run_id": baseline}
    store.create_run(
        RunInfo(run_id=run_id, suite="s", agent=agent, started_at=0.0, settings=settings),
        [Case(id=case_id, input="x") for case_id in verdicts],
    )
    store.save_attempts(
        [
            AttemptRecord(
                run_id=run_id,
                case_id=case_id,
                attempt=1,
                verdict=verdict,
                failure_type="loop" if verdict == "FAIL" else None,
                reason=reason if verdict == "FAIL" else "ok",
            )
            for case_id, verdict in verdicts.items()
        ]
    )
    store.finish_run(run_id, "finished", 1.0)
    return run_id


def test_a_drop_says_in_plain_words_whether_it_is_more_than_noise():
    big = pass_rate_drops(run_of("base", {"": (960, 1000)}), run_of("cand", {"": (930, 1000)}))
    small = pass_rate_drops(run_of("base", {"": (96, 100)}), run_of("cand", {"": (93, 100)}))
    assert big[0].line().endswith(": more than noise)")
    assert small[0].line().endswith(": within noise)")
    with use_language("zh_CN"):
        assert big[0].line() == (
            "**任务成功率** 96% -> 93%（-3.0 个百分点，区间 -5.0 至 -1.0：超出噪声范围）"
        )
        assert small[0].line().endswith("：在噪声范围内）")


def test_for_a_chinese_reader_the_gate_alert_is_chinese_with_the_identifiers_as_written(store):
    v1 = run_demo_agent(store, "v1")
    v2 = run_demo_agent_with(store, "v2", {"baseline": {"ref": v1, "run_id": v1}})
    with use_language("zh_CN"):
        [alert] = run_notifications(store, build_report(store, v2), DASHBOARD)
    assert alert.events == ("gate_failed", "metric_drop")
    assert alert.title.startswith("Seatrial：workspace-agent 未通过门禁；任务成功率 100% -> ")
    assert "未通过门禁。\n\n**未达标的门禁**\n- P0 p0_cases：" in alert.text
    assert f"**相比 `{v1}` 回归的用例**\n- read-missing-config" in alert.text
    assert f"**通过率相比 `{v1}` 下降**（[对比]({DASHBOARD}/compare?" in alert.text
    assert "超出噪声范围）" in alert.text
    assert ("运行", v2) in alert.facts and ("用例集", "workspace-agent") in alert.facts
    for english in ("did not meet", "Unmet", "Regressed", "Pass rates fell", "task success"):
        assert english not in alert.text + alert.title


def test_for_a_chinese_reader_each_failing_case_reads_with_its_verdict_and_type_in_chinese(
    store,
):
    v2 = run_demo_agent(store, "v2")
    with use_language("zh_CN"):
        [alert] = run_notifications(store, build_report(store, v2))
    listed = alert.text.split("**失败用例（3）**\n", 1)[1].splitlines()
    assert any(
        line.startswith("- once-grant-second-write 失败（越权（permission_violation））：`")
        for line in listed
    )
    looped = "- read-missing-config 失败（死循环（loop））：`"
    assert any(line.startswith(looped) for line in listed)


def test_the_daily_message_reads_in_chinese_and_says_the_change_is_within_noise(store):
    day = dt.date(2026, 3, 10)
    store_run(store, "support", at(day - dt.timedelta(days=1), 9), {"refund": [""], "hi": [""]})
    today = store_run(store, "support", at(day, 10), {"refund": ["no_loop: again"], "hi": [""]})
    with use_language("zh_CN"):
        note = daily_notification(daily_report(store, day, tz=dt.UTC), DASHBOARD)
    assert note.title == "Seatrial 日报 2026-03-10"
    # Two attempts each side: a 50-point drop that chance alone could make.
    assert f"support `{today}`：50%（相比 `" in note.text
    assert "-50.0 个百分点，在噪声范围内）" in note.text
    assert "**新增失败**\n- support：refund 失败（死循环（loop））" in note.text
    assert ("新增失败", "1") in note.facts and ("费用", "$0.02") in note.facts
    english = daily_notification(daily_report(store, day, tz=dt.UTC), DASHBOARD)
    assert "-50.0 pts against `" in english.text and ", within noise)" in english.text
