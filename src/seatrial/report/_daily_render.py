"""The daily report as Markdown (``daily-YYYY-MM-DD.md``) and HTML (``daily-YYYY-MM-DD.html``).

The HTML body is one fragment that both the standalone file and the dashboard's /daily page
show, so the two never disagree. Every value from the store (suite names, case ids, reasons,
replies, labels) is escaped: agent replies are untrusted input.
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

from seatrial.compare import markdown_text
from seatrial.i18n import N_, current_language, ngettext
from seatrial.i18n import gettext as _
from seatrial.record import failure_type_word, verdict_word
from seatrial.report._daily import DailyReport, DailyRun

EXAMPLE_CHARS = 160
"""How much of a cluster's example reason is shown."""


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _delta(value: float | None) -> str:
    if value is None:
        return "-"
    points = value * 100
    if abs(points) < 0.05:
        return _("±0 pts")
    return _("{change} pts").format(change=f"{points:+.1f}")


WITHIN_NOISE = N_("within noise")
"""A change the attempts cannot tell from chance (its interval holds zero), in plain words."""
BEYOND_NOISE = N_("more than noise")
"""A change the attempts can tell from chance (its interval lies on one side of zero)."""


def noise_words(beyond: bool) -> str:
    """Whether a change is more than noise, in plain words in the reader's language."""
    return _(BEYOND_NOISE) if beyond else _(WITHIN_NOISE)


def change_words(run: DailyRun) -> str:
    """What the change against the previous run means (:func:`noise_words`); empty without
    a change (or with one too small to show)."""
    beyond = run.beyond_noise
    if beyond is None or abs(run.delta or 0.0) < 0.0005:
        return ""
    return noise_words(beyond)


def _change(run: DailyRun) -> str:
    """The change column: the points, then what they mean."""
    words = change_words(run)
    return _delta(run.delta) + (_(" ({text})").format(text=words) if words else "")


def _cut(text: str, limit: int = EXAMPLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def daily_headline(report: DailyReport) -> str:
    """One sentence: runs, suites, attempts, pass rate and failure clusters of the day."""
    zone = report.start.strftime("%Z") or report.start.strftime("UTC%z")
    rate = _rate(report.passes / report.attempts if report.attempts else None)
    runs, suites = len(report.runs), len(report.suites)
    clusters = len(report.clusters)
    return _(
        "{runs} of {suites} started on {day} ({zone}): {attempts}, {rate} passed, "
        "{failed} failed in {clusters}."
    ).format(
        runs=ngettext("{count} run", "{count} runs", runs).format(count=runs),
        suites=ngettext("{count} suite", "{count} suites", suites).format(count=suites),
        day=report.day.isoformat(),
        zone=zone,
        attempts=ngettext("{count} attempt", "{count} attempts", report.attempts).format(
            count=report.attempts
        ),
        rate=rate,
        failed=sum(c.count for c in report.clusters),
        clusters=ngettext("{count} cluster", "{count} clusters", clusters).format(count=clusters),
    )


def daily_title(report: DailyReport) -> str:
    """``Seatrial daily report YYYY-MM-DD``, in the reader's language."""
    return _("Seatrial daily report {day}").format(day=report.day.isoformat())


def _new_failure_rows(report: DailyReport) -> list[tuple[DailyRun, str, str, str]]:
    return [
        (
            run,
            failure.case_id,
            verdict_word(failure.verdict),
            ", ".join(failure_type_word(t) for t in failure.failure_types) or "-",
        )
        for run in report.runs
        for failure in run.new_failures
    ]


_TRUNCATED = N_("More runs started that day than the report reads; the newest are shown.")
_NO_RUNS = N_("No run started that day.")
_PASS_RATES = N_("Pass rates")
_NEW_FAILURES = N_("New failures")
_CLUSTERS = N_("Failure clusters")
_COST = N_("Cost")
_WHAT = N_("what")
_US_DOLLARS = N_("US dollars")
_TRACED_ATTEMPTS = N_("attempts (their traces)")
_NONE_FAILED = N_("No attempt failed.")
_NO_NEW_FAILURES = N_("No case that passed in its suite's previous run failed today.")
_RUN_COLUMNS = (
    N_("suite"),
    N_("run"),
    N_("agent"),
    N_("attempts"),
    N_("pass rate"),
    N_("previous run"),
    N_("change"),
)
"""The columns of the table of the day's runs, in the Markdown and the HTML alike."""


def _spend_label(purpose: str) -> str:
    return _("{purpose} model calls (ledger)").format(purpose=purpose)


def render_daily_markdown(report: DailyReport) -> str:
    """The daily report as Markdown, ready to paste into a chat or a wiki, in the reader's
    language."""
    lines = [f"# {daily_title(report)}", "", daily_headline(report), ""]
    if report.truncated:
        lines += [f"**{_(_TRUNCATED)}**", ""]
    if not report.runs:
        return "\n".join([*lines, _(_NO_RUNS)]) + "\n"
    lines += [f"## {_(_PASS_RATES)}", ""]
    lines += ["| " + " | ".join(_(column) for column in _RUN_COLUMNS) + " |"]
    lines += ["|---|---|---|---|---|---|---|"]
    for run in report.runs:
        previous = (
            _rate(run.previous_pass_rate) + _(" ({text})").format(text=f"`{run.previous_id}`")
            if run.previous_id
            else "-"
        )
        lines.append(
            f"| {markdown_text(run.info.suite)} | `{run.info.run_id}` | "
            f"{markdown_text(run.info.agent)} | "
            f"{run.attempts} | {_rate(run.pass_rate)} | {previous} | {_change(run)} |"
        )
    lines += ["", f"## {_(_NEW_FAILURES)}", ""]
    rows = _new_failure_rows(report)
    if rows:
        lines += [_("Cases that failed today and passed in their suite's previous run."), ""]
        header = [_("suite"), _("case"), _("verdict"), _("failure types"), _("run")]
        lines += ["| " + " | ".join(header) + " |", "|---|---|---|---|---|"]
        lines += [
            f"| {markdown_text(run.info.suite)} | {markdown_text(case)} | {verdict} | "
            f"{markdown_text(types)} | "
            f"`{run.info.run_id}` |"
            for run, case, verdict, types in rows
        ]
    else:
        lines.append(_(_NO_NEW_FAILURES))
    lines += ["", f"## {_(_CLUSTERS)}", ""]
    if report.clusters:
        header = [_("failure type"), _("attempts"), _("cases"), _("label"), _("example")]
        lines += ["| " + " | ".join(header) + " |", "|---|---|---|---|---|"]
        for cluster in report.clusters:
            name = f"**{markdown_text(cluster.name)}**: " if cluster.name else ""
            example = cluster.example
            lines.append(
                f"| {markdown_text(failure_type_word(cluster.failure_type))} | {cluster.count} | "
                f"{len(cluster.cases)} | {name}{markdown_text(cluster.label)} | "
                f"{markdown_text(example.case_id)} #{example.attempt}: "
                f"{markdown_text(_cut(example.reason))} |"
            )
    else:
        lines.append(_("No attempt failed."))
    lines += ["", f"## {_(_COST)}", ""]
    lines += [f"| {_(_WHAT)} | {_(_US_DOLLARS)} |", "|---|---|"]
    lines += [f"| {_spend_label(purpose)} | {usd:.4f} |" for purpose, usd in report.spend.items()]
    lines += [f"| {_(_TRACED_ATTEMPTS)} | {report.cost_usd:.4f} |", ""]
    return "\n".join(lines)


def daily_html_body(report: DailyReport, *, links: bool = False) -> str:
    """The report as an HTML fragment (``<section id="daily-report">``), every value escaped;
    ``links`` makes run ids links to the dashboard's run pages."""
    e = html.escape

    def run_link(run_id: str) -> str:
        return (
            f'<a href="/runs/{e(quote(run_id, safe=""))}">{e(run_id)}</a>' if links else e(run_id)
        )

    parts = ['<section id="daily-report">', f'<p class="headline">{e(daily_headline(report))}</p>']
    if report.truncated:
        parts.append(f'<p class="warning-box">{e(_(_TRUNCATED))}</p>')
    if not report.runs:
        parts.append(f'<p id="no-runs">{e(_(_NO_RUNS))}</p></section>')
        return "\n".join(parts)
    parts += [f"<h2>{e(_(_PASS_RATES))}</h2>", '<table id="daily-runs">']
    parts.append(_header(*(_(column) for column in _RUN_COLUMNS)))
    for run in report.runs:
        previous = (
            _rate(run.previous_pass_rate) + _(" ({text})").format(text=run_link(run.previous_id))
            if run.previous_id
            else "-"
        )
        parts.append(
            f"<tr><td>{e(run.info.suite)}</td>"
            f"<td>{run_link(run.info.run_id)}</td>"
            f"<td>{e(run.info.agent)}</td><td>{run.attempts}</td><td>{_rate(run.pass_rate)}</td>"
            f"<td>{previous}</td><td>{e(_change(run))}</td></tr>"
        )
    parts += ["</table>", f"<h2>{e(_(_NEW_FAILURES))}</h2>"]
    rows = _new_failure_rows(report)
    if rows:
        parts.append('<table id="new-failures">')
        parts.append(_header(_("suite"), _("case"), _("verdict"), _("failure types"), _("run")))
        parts += [
            f"<tr><td>{e(run.info.suite)}</td><td>{e(case)}</td><td>{e(verdict)}</td>"
            f"<td>{e(types)}</td><td>{run_link(run.info.run_id)}</td></tr>"
            for run, case, verdict, types in rows
        ]
        parts.append("</table>")
    else:
        parts.append(f"<p>{e(_(_NO_NEW_FAILURES))}</p>")
    parts.append(f"<h2>{e(_(_CLUSTERS))}</h2>")
    if report.clusters:
        parts.append('<table id="failure-clusters">')
        parts.append(
            _header(_("failure type"), _("attempts"), _("cases"), _("label"), _("example"))
        )
        for cluster in report.clusters:
            name = f"<strong>{e(cluster.name)}</strong><br>" if cluster.name else ""
            example = cluster.example
            parts.append(
                f"<tr><td>{e(failure_type_word(cluster.failure_type))}</td><td>{cluster.count}</td>"
                f"<td>{e(', '.join(cluster.cases))}</td><td>{name}{e(cluster.label)}</td>"
                f"<td>{e(example.case_id)} #{example.attempt}: {e(_cut(example.reason))}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append(f"<p>{e(_(_NONE_FAILED))}</p>")
    parts += [
        f"<h2>{e(_(_COST))}</h2>",
        '<table id="daily-cost">',
        _header(_("what"), _("US dollars")),
    ]
    parts += [
        f"<tr><td>{e(_spend_label(purpose))}</td><td>{usd:.4f}</td></tr>"
        for purpose, usd in report.spend.items()
    ]
    parts += [f"<tr><td>{e(_(_TRACED_ATTEMPTS))}</td><td>{report.cost_usd:.4f}</td></tr>"]
    parts += ["</table>", "</section>"]
    return "\n".join(parts)


_STYLE = """body{font-family:system-ui,"PingFang SC","Microsoft YaHei","Noto Sans CJK SC",
"Source Han Sans SC",sans-serif;margin:2rem;max-width:70rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;
padding:.3rem .6rem;text-align:left;vertical-align:top}th{background:#f4f4f4}"""


def _header(*names: str) -> str:
    return "<tr>" + "".join(f"<th>{html.escape(name)}</th>" for name in names) + "</tr>"


def render_daily_html(report: DailyReport) -> str:
    """The daily report as a standalone HTML page (no scripts, no external files), in the
    reader's language (its ``lang`` too)."""
    title = daily_title(report)
    lang = "zh-CN" if current_language() == "zh_CN" else "en"
    return (
        f'<!doctype html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{daily_html_body(report)}\n</body>\n</html>\n"
    )


def write_daily_report(report: DailyReport, directory: Path) -> list[Path]:
    """Write ``daily-YYYY-MM-DD.md`` and ``.html`` into ``directory`` (made if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"daily-{report.day.isoformat()}"
    markdown = directory / f"{stem}.md"
    page = directory / f"{stem}.html"
    markdown.write_text(render_daily_markdown(report), encoding="utf-8")
    page.write_text(render_daily_html(report), encoding="utf-8")
    return [markdown, page]
