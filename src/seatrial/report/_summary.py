"""A run's summary in words, in the reader's language: summary.md, and the lines the
terminal's summary shares with it (the counts, the statistics, the judge)."""

from __future__ import annotations

from typing import Any

from seatrial.compare import markdown_text
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext, pgettext, render
from seatrial.record import Summary, failure_type_word, verdict_word
from seatrial.report._build import RunReport

INTERVAL_LEVEL = "95%"
"""The confidence of the pass rates' intervals, as the reports write it. A placeholder in
the translated text: Babel reads ``95% i`` as a printf conversion (docs/i18n.md)."""


def summary_counts(summary: Summary) -> dict[str, str]:
    """The run's counts said with their nouns, in the reader's language and the right number
    ("1 attempt", "3 attempts"; "3 次执行"): ``cases``, ``attempts``, ``warnings``, ``errors``."""
    s = summary
    return {
        "cases": ngettext("{count} case", "{count} cases", s.cases).format(count=s.cases),
        "attempts": ngettext("{count} attempt", "{count} attempts", s.attempts).format(
            count=s.attempts
        ),
        "warnings": ngettext("{count} warning", "{count} warnings", s.warnings).format(
            count=s.warnings
        ),
        "errors": ngettext("{count} error", "{count} errors", s.errors).format(count=s.errors),
    }


def to_markdown(report: RunReport) -> str:
    """summary.md: ready to paste into a pull request, in the reader's language
    (:mod:`seatrial.i18n`); ids, identifiers and figures as stored."""
    info, s = report.info, report.summary
    gate = pgettext("gate", "met") if report.gate.passed else pgettext("gate", "NOT met")
    rate = report.statistics.pass_rate_text() if report.statistics else f"{s.pass_rate:.1%}"
    lines = [
        _("## Seatrial run `{run_id}`: {suite}").format(
            run_id=info.run_id, suite=markdown_text(info.suite)
        ),
        "",
        _(
            "Agent `{agent}` - {cases}, {attempts} - **{passed} passed**, {failed} failed, "
            "{warnings}, {errors} (pass rate {rate}, {level} interval). Gate **{gate}**."
        ).format(
            agent=info.agent,
            passed=s.passed,
            failed=s.failed,
            rate=rate,
            level=INTERVAL_LEVEL,
            gate=gate,
            **summary_counts(s),
        ),
        "",
    ]
    if report.dataset:
        lines += [_("Ran {dataset}.").format(dataset=markdown_text(report.dataset_text)), ""]
    if report.judge:
        judge = markdown_text(judge_line(report.judge))
        lines += [_("Judge: {judge}").format(judge=judge), ""]
    if report.spend_usd:
        spend = markdown_text(report.spend_text)
        lines += [_("Model calls cost {spend}.").format(spend=spend), ""]
    if report.unpriced_models:
        warning = markdown_text(report.unpriced_text)
        lines += [_("**Warning: {warning}**").format(warning=warning), ""]
    if report.gate.changed:
        warning = markdown_text(report.gate.changed)
        lines += [_("**Warning: {warning}**").format(warning=warning), ""]
    for drift in report.version_drift:
        lines += [
            _("**Warning: {drift}** (not the pinned version)").format(
                drift=markdown_text(drift.line())
            ),
            "",
        ]
    if report.simulator:
        lines += [f"{markdown_text(report.simulator.line())}.", ""]
    if report.gate.rule:
        lines += [_("{rule}.").format(rule=report.gate.rule[0].upper() + report.gate.rule[1:]), ""]
    if report.gate.outcomes:
        lines += [_("| gate | check | figure | needs | verdict |"), "|---|---|---|---|---|"]
        verdict = {
            "met": _("met"),
            "unmet": _("**UNMET**"),
            "not_evaluated": _("not evaluated"),
        }
        for o in report.gate.outcomes:
            said = verdict[o.verdict]
            if o.detail:
                said = _("{text} ({detail})").format(text=said, detail=markdown_text(o.detail))
            lines.append(
                f"| {markdown_text(o.gate)} | {o.check} | {markdown_text(o.figure)} | "
                f"{markdown_text(o.threshold)} | {said} |"
            )
        lines.append("")
    lines += [f"{markdown_text(line)}  " for line in statistics_lines(report)]
    if report.flaky:
        lines += [
            _("Flaky (kept out of regression deltas): ")
            + "; ".join(f"`{case}` ({markdown_text(why)})" for case, why in report.flaky.items()),
        ]
    if report.baseline:
        headline = markdown_text(str(report.baseline["headline"]))
        lines += [
            _("Against baseline `{run_id}`: {headline}").format(
                run_id=report.baseline["run_id"], headline=headline
            )
        ]
    lines.append("")
    lines += [
        _(
            "| category | cases | attempts | pass rate [{level} interval] | failures by type |"
        ).format(level=INTERVAL_LEVEL),
        "|---|---|---|---|---|",
    ]
    for c in report.categories:
        failures = ", ".join(f"{failure_type_word(k)}: {v}" for k, v in c.failures_by_type.items())
        failures = markdown_text(failures or "-")
        category = markdown_text(c.category or "-")
        low, high = c.interval
        rate = f"{c.pass_rate:.1%} [{low:.1%}, {high:.1%}]"
        lines.append(f"| {category} | {c.cases} | {c.attempts} | {rate} | {failures} |")
    failing = [c for c in report.cases if c.verdict != "PASS"]
    if failing:
        lines += [
            "",
            _("| case | priority | verdict | failure type | reason |"),
            "|---|---|---|---|---|",
        ]
        for case in failing:
            failure = markdown_text(failure_type_word(case.failure_type or "-"))
            lines.append(
                f"| `{case.case_id}` | {case.priority} | {verdict_word(case.verdict)} | {failure} "
                f"| {markdown_text(render(case.message, case.reason))} |"
            )
    return "\n".join(lines) + "\n"


WIDE_INTERVAL = 0.2
"""An interval this wide (20 points) or wider is said in words: the rate is not pinned down."""


def statistics_lines(report: RunReport) -> list[str]:
    """Case pass rate, pass@k / pass^k over repeats, and latency percentiles, as lines."""
    stats = report.statistics
    if stats is None:
        return []
    case_rate = stats.case_pass_rate
    line = _("cases passing: {estimate:.1%} [{low:.1%}, {high:.1%}] (95% Wilson interval)").format(
        estimate=case_rate["estimate"], low=case_rate["low"], high=case_rate["high"]
    )
    if case_rate["high"] - case_rate["low"] >= WIDE_INTERVAL:
        line += _(": too few cases to pin the rate down closer than that")
    lines = [line]
    if stats.pass_k:
        lines.append(
            _("pass^k (every one of k repeats passes): ")
            + ", ".join(f"k={p.k} {p.pass_hat_k:.3f}" for p in stats.pass_k)
        )
        lines.append(
            _("pass@k (at least one of k passes): ")
            + ", ".join(f"k={p.k} {p.pass_at_k:.3f}" for p in stats.pass_k)
        )
    latency = stats.latency_ms
    if latency:
        lines.append(
            _(
                "latency ms: p50 {p50:.0f}, p90 {p90:.0f}, p95 {p95:.0f}, p99 {p99:.0f}, "
                "max {max:.0f}"
            ).format(**latency)
        )
    return lines


def judge_line(judge: dict[str, Any], *, why: bool = True) -> str:
    """One line on the run's judge: which, and whether its FAIL verdicts count; with ``why``,
    the reason an advisory judge is advisory and what to do (the terminal said it as the run
    started, so its summary leaves it out)."""
    digest = str(judge.get("prompt_hash", ""))[:12]
    who = _("{model} (prompt {version}, {digest})").format(
        model=judge.get("model"), version=judge.get("prompt_version"), digest=digest
    )
    if judge.get("calibrated"):
        return _("{who}: calibrated, its FAIL verdicts count").format(who=who)
    if not why:
        return _("{who}: advisory, its FAIL verdicts are WARNINGs").format(who=who)
    return _("{who}: advisory, its FAIL verdicts are WARNINGs ({reason})").format(
        who=who, reason=judge.get("reason", "")
    )
