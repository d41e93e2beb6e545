"""The pull-request comment: each run's verdict, gates, regressions against its baseline with
their intervals, and where each regressed case's trajectory first parted from the baseline's;
without a baseline, the failing cases and why.

One comment carries a section per run (a CI tier runs several suites). Its first line is a
hidden marker (``<!-- seatrial -->``) that the poster finds it by, so a pull request keeps one
Seatrial comment. The figures come from the owners: the report (:func:`build_report`: the
run's one verdict, against the baseline it stored), the comparison
(:func:`seatrial.compare.compare_runs`: transitions, Newcombe intervals) and the trace diff
(:func:`seatrial.compare.diff_attempts`: the first divergence and its sentence). Text the agent
wrote (failure reasons, divergence sentences) is shown as code, so it cannot mention people,
link issues or break the layout. GitHub takes 65,536 characters: long lists are cut with
"... and N more".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from seatrial.compare import (
    CaseChange,
    Comparison,
    Divergence,
    change_text,
    compare_runs,
    diff_attempts,
    headline,
    load_attempt,
    parse_attempt_ref,
    stored_baseline_id,
)
from seatrial.i18n import gettext as _
from seatrial.i18n import render
from seatrial.notify import GITHUB_COMMENT_LIMIT, marker_line
from seatrial.record import failure_type_word, verdict_word
from seatrial.report._build import RunReport, build_report
from seatrial.report._links import dashboard_link
from seatrial.report._summary import INTERVAL_LEVEL, summary_counts
from seatrial.store import Store

SHOWN_CASES = 30
"""Regressed cases (failing ones, without a baseline) listed per run before "... and N
more"."""
SHOWN_DIVERGENCES = 10
"""Regressed cases per run whose traces are read and diffed (each is two trace reads)."""
_TEXT_CHARS = 300
"""Where a reason or a divergence sentence is cut."""


def _gates_met() -> str:
    return _("gates met")


def _gates_not_met() -> str:
    return _("gates **NOT met**")


@dataclass(frozen=True)
class _Regression:
    change: CaseChange
    priority: str
    reason: str
    """Why the case fails in the run: its first failing attempt's reason."""
    divergence: Divergence | None
    """Where its trajectory parted from the baseline's; None when not diffed or identical."""


@dataclass(frozen=True)
class _Section:
    report: RunReport
    comparison: Comparison | None
    regressions: list[_Regression]


def _code(text: str, in_table: bool = False) -> str:
    """``text`` as an inline code span: one line, cut to a length, shown as written."""
    text = " ".join(text.split())
    if len(text) > _TEXT_CHARS:
        text = text[: _TEXT_CHARS - 3] + "..."
    if not text:
        return ""
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    if in_table:  # GitHub splits table cells on `|` even inside code
        text = text.replace("|", "\\|")
    return f"{ticks}{text}{ticks}"


def _plain(text: str) -> str:
    """Seatrial's own text (gate figures, names from suite files) for a table cell."""
    text = " ".join(text.split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace("@", "@\u200b")


def _regression(
    store: Store, report: RunReport, base_id: str, change: CaseChange, diff: bool
) -> _Regression:
    case = next((c for c in report.cases if c.case_id == change.case_id), None)
    failing = next((a for a in case.attempts if a.verdict != "PASS"), None) if case else None
    divergence = None
    if diff:
        # Each side's first attempt that did not pass (else its first): the one a person
        # would open, as `seatrial diff` picks it.
        records = [
            load_attempt(store, parse_attempt_ref(store, run_id, case=change.case_id))
            for run_id in (base_id, report.info.run_id)
        ]
        divergence = diff_attempts(records[0], records[1]).first
    return _Regression(
        change=change,
        priority=case.priority if case else "",
        reason=render(failing.message, failing.reason) if failing else "",
        divergence=divergence,
    )


def _section(
    store: Store, run_id: str, baseline_id: str | None, project_dir: Path | None
) -> _Section:
    report = build_report(store, run_id, project_dir=project_dir)
    base_id = baseline_id or stored_baseline_id(report.info.settings)
    if base_id is None:
        return _Section(report, None, [])
    comparison = compare_runs(store, base_id, run_id)
    regressions = [
        _regression(store, report, base_id, change, number < SHOWN_DIVERGENCES)
        for number, change in enumerate(comparison.of("regressed"))
    ]
    return _Section(report, comparison, regressions)


def _gate_lines(report: RunReport) -> list[str]:
    gate = report.gate
    lines = []
    if gate.changed:
        lines += [_("**Warning**: {change}").format(change=_plain(gate.changed)), ""]
    if gate.rule:
        lines += [_("{rule}.").format(rule=f"{gate.rule[0].upper()}{gate.rule[1:]}"), ""]
    if not gate.outcomes:
        return lines
    verdicts = {
        "met": _("met"),
        "unmet": "**" + _("UNMET") + "**",
        "not_evaluated": _("not evaluated"),
    }
    lines += [
        _row(_("gate"), _("check"), _("figure"), _("needs"), _("verdict")),
        "|---|---|---|---|---|",
    ]
    for o in gate.outcomes:
        detail = _in_brackets(_plain(o.detail)) if o.detail else ""
        lines.append(
            f"| {_plain(o.gate)} | {o.check} | {_plain(o.figure)} | {_plain(o.threshold)} "
            f"| {verdicts[o.verdict]}{detail} |"
        )
    return [*lines, ""]


def _in_brackets(text: str) -> str:
    """`` (text)``, with the reader's brackets (and space before them, where it takes one)."""
    return _(" ({text})").format(text=text)


def _row(*cells: str) -> str:
    """A table row of Seatrial's own words (headers)."""
    return "| " + " | ".join(cells) + " |"


def _more(count: int, cells: int) -> str:
    """The last row of a cut table: ``| ... and N more | | ... |``."""
    more = _("... and {count} more").format(count=count)
    return f"| {more} |" + " |" * (cells - 1)


def _failing_lines(report: RunReport, shown: int) -> list[str]:
    """Without a baseline: the cases that did not pass, with why, so a first run's comment
    still says what to fix."""
    lines = [_("No baseline: nothing to compare with, so no regressions are listed."), ""]
    failing = [case for case in report.cases if case.verdict != "PASS"]
    if not failing:
        return lines
    lines += [
        _("#### Failing ({count})").format(count=len(failing)),
        "",
        _row(_("case"), _("category"), _("priority"), _("verdict"), _("failure type"), _("why")),
        "|---|---|---|---|---|---|",
    ]
    for case in failing[:shown]:
        first = next((a for a in case.attempts if a.verdict != "PASS"), case.attempts[0])
        passes = sum(a.verdict == "PASS" for a in case.attempts)
        lines.append(
            f"| {_code(case.case_id, in_table=True)} | {_plain(case.category or '-')} | "
            f"{_plain(case.priority)} | {verdict_word(case.verdict)} "
            f"{passes}/{len(case.attempts)} | "
            f"{_plain(failure_type_word(first.failure_type) if first.failure_type else '-')} | "
            f"{_code(render(first.message, first.reason), in_table=True)} |"
        )
    if len(failing) > shown:
        lines.append(_more(len(failing) - shown, 6))
    return [*lines, ""]


def _regression_lines(section: _Section, dashboard_url: str | None, shown: int) -> list[str]:
    comparison = section.comparison
    if comparison is None:
        return _failing_lines(section.report, shown)
    base_id, run_id = comparison.base.info.run_id, comparison.cand.info.run_id
    link = dashboard_link(dashboard_url, "/compare", {"base": base_id, "cand": run_id})
    compared = _(" ([compare]({link}))").format(link=link) if link else ""
    against = _("Against baseline `{run_id}`: {headline}").format(
        run_id=base_id, headline=_plain(headline(comparison))
    )
    lines = [against + compared, ""]
    regressions = section.regressions
    if not regressions:
        return [*lines, _("**Nothing regressed** against the baseline."), ""]
    hit = {r.change.category for r in regressions}
    lines += [
        _row(
            _("category"),
            _("baseline"),
            _("this run"),
            _("change [{level} interval]").format(level=INTERVAL_LEVEL),
        ),
        "|---|---|---|---|",
    ]
    for group in comparison.categories:
        if group.name in hit:
            lines.append(
                f"| {_plain(group.name or '-')} | {group.base.format()} | "
                f"{group.cand.format()} | {change_text(group)} |"
            )
    lines += [
        "",
        _("#### Regressed ({count})").format(count=len(regressions)),
        "",
        _row(
            _("case"),
            _("category"),
            _("priority"),
            _("baseline"),
            _("this run"),
            _("why it fails now"),
        ),
        "|---|---|---|---|---|---|",
    ]
    for r in regressions[:shown]:
        c = r.change
        failures = (
            _in_brackets(", ".join(failure_type_word(t) for t in c.cand_failures))
            if c.cand_failures
            else ""
        )
        lines.append(
            f"| {_code(c.case_id, in_table=True)} | {_plain(c.category or '-')} | {r.priority} | "
            f"{verdict_word(str(c.base_verdict))} {c.base_passes} | "
            f"{verdict_word(str(c.cand_verdict))} {c.cand_passes}{failures} | "
            f"{_code(r.reason, in_table=True)} |"
        )
    if len(regressions) > shown:
        lines.append(_more(len(regressions) - shown, 6))
    diffed = [r for r in regressions[:shown] if r.divergence is not None]
    if diffed:
        lines += ["", _("**First divergence** (A: the baseline, B: this run):"), ""]
        for r in diffed:
            d = r.divergence
            assert d is not None
            case_link = dashboard_link(
                dashboard_url,
                "/compare/case",
                {"base": base_id, "cand": run_id, "case": r.change.case_id},
            )
            trace = _(" ([trace diff]({link}))").format(link=case_link) if case_link else ""
            step = _("{case}, step {step} (`{kind}`): {summary}").format(
                case=_code(r.change.case_id), step=d.row + 1, kind=d.kind, summary=_code(d.summary)
            )
            lines.append(f"- {step}{trace}")
        rest = len(regressions) - len(diffed)
        if rest:
            lines.append(
                "- "
                + _("... and {count} more: `{command}` shows any of them").format(
                    count=rest, command=f"seatrial diff {base_id}:CASE {run_id}"
                )
            )
    return [*lines, ""]


def _section_lines(section: _Section, dashboard_url: str | None, shown: int) -> list[str]:
    report = section.report
    info, s = report.info, report.summary
    verdict = _gates_met() if report.gate.passed else _gates_not_met()
    rate = report.statistics.pass_rate_text() if report.statistics else f"{s.pass_rate:.1%}"
    status = (
        _(" Run status: **{status}**.").format(status=info.status)
        if info.status != "finished"
        else ""
    )
    link = dashboard_link(dashboard_url, f"/runs/{quote(info.run_id, safe='')}")
    dashboard = _(" ([dashboard]({link}))").format(link=link) if link else ""
    counts = summary_counts(s)
    lines = [
        "### " + _("{name}: {text}").format(name=_plain(info.suite), text=verdict),
        "",
        _(
            "Run `{run_id}`{dashboard}, agent {agent}: {cases}, {attempts}, {passed} passed, "
            "{failed} failed, {errors}; pass rate {rate} ({level} interval).{status}"
        ).format(
            run_id=info.run_id,
            dashboard=dashboard,
            agent=_code(info.agent),
            cases=counts["cases"],
            attempts=counts["attempts"],
            passed=s.passed,
            failed=s.failed,
            errors=counts["errors"],
            rate=rate,
            level=INTERVAL_LEVEL,
            status=status,
        ),
        "",
    ]
    if report.dataset:
        lines += [_("Ran {dataset}.").format(dataset=_plain(report.dataset_text)), ""]
    return lines + _gate_lines(report) + _regression_lines(section, dashboard_url, shown)


def _render(marker: str, sections: list[_Section], dashboard_url: str | None, shown: int) -> str:
    failing = sum(not s.report.gate.passed for s in sections)
    if not sections:
        title = _("no runs")
    elif failing and len(sections) > 1:
        title = _("{verdict} ({failing} of {runs} runs)").format(
            verdict=_gates_not_met(), failing=failing, runs=len(sections)
        )
    elif failing:
        title = _gates_not_met()
    else:
        title = _gates_met()
    lines = [marker_line(marker), "## " + _("Seatrial: {verdict}").format(verdict=title), ""]
    for section in sections:
        lines += _section_lines(section, dashboard_url, shown)
    return "\n".join(lines).rstrip("\n") + "\n"


def github_comment(
    store: Store,
    runs: list[tuple[str, str | None]],
    *,
    marker: str = "seatrial",
    dashboard_url: str | None = None,
    project_dir: Path | None = None,
) -> str:
    """The pull-request comment for ``runs``, as GitHub Markdown.

    Args:
        store: where the runs are stored.
        runs: ``(run_id, baseline_id)`` pairs, one section each; a None baseline means the
            one the run stored when it started (none: no regressions are listed). The gates'
            verdict is always the run's own, against the baseline it stored.
        marker: the comment's identity, written as its hidden first line.
        dashboard_url: the dashboard's address; links to each run, the comparison and each
            regressed case's trace diff when given.
        project_dir: resolves a relative gates source, for the warning that it changed.

    Returns:
        Markdown of at most 65,536 characters (GitHub's limit): the lists are shortened with
        "... and N more" until it fits.
    """
    dashboard_url = dashboard_url.rstrip("/") if dashboard_url else None
    sections = [_section(store, run_id, base, project_dir) for run_id, base in runs]
    shown = SHOWN_CASES
    text = _render(marker, sections, dashboard_url, shown)
    while len(text) > GITHUB_COMMENT_LIMIT and shown > 0:
        shown //= 2
        text = _render(marker, sections, dashboard_url, shown)
    if len(text) > GITHUB_COMMENT_LIMIT:  # too many runs even with no case listed
        note = "\n" + _("... and more: the comment was cut at GitHub's limit") + "\n"
        text = text[: text.rfind("\n", 0, GITHUB_COMMENT_LIMIT - len(note))] + note
    return text
