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
from seatrial.i18n import counted
from seatrial.report._daily import DailyReport, DailyRun

EXAMPLE_CHARS = 160
"""How much of a cluster's example reason is shown."""


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _delta(value: float | None) -> str:
    if value is None:
        return "-"
    points = value * 100
    return "±0 pts" if abs(points) < 0.05 else f"{points:+.1f} pts"


def _cut(text: str, limit: int = EXAMPLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def daily_headline(report: DailyReport) -> str:
    """One sentence: runs, suites, attempts, pass rate and failure clusters of the day."""
    zone = report.start.strftime("%Z") or report.start.strftime("UTC%z")
    rate = _rate(report.passes / report.attempts if report.attempts else None)
    return (
        f"{counted(len(report.runs), 'run')} of {counted(len(report.suites), 'suite')} started "
        f"on {report.day.isoformat()} ({zone}): {counted(report.attempts, 'attempt')}, {rate} "
        f"passed, {sum(c.count for c in report.clusters)} failed in "
        f"{counted(len(report.clusters), 'cluster')}."
    )


def _new_failure_rows(report: DailyReport) -> list[tuple[DailyRun, str, str, str]]:
    return [
        (run, failure.case_id, failure.verdict, ", ".join(failure.failure_types) or "-")
        for run in report.runs
        for failure in run.new_failures
    ]


def render_daily_markdown(report: DailyReport) -> str:
    """The daily report as Markdown, ready to paste into a chat or a wiki."""
    lines = [f"# Seatrial daily report {report.day.isoformat()}", "", daily_headline(report), ""]
    if report.truncated:
        lines += ["**More runs started that day than the report reads; the newest are shown.**"]
        lines += [""]
    if not report.runs:
        return "\n".join([*lines, "No run started that day."]) + "\n"
    lines += ["## Pass rates", ""]
    lines += ["| suite | run | agent | attempts | pass rate | previous run | change |"]
    lines += ["|---|---|---|---|---|---|---|"]
    for run in report.runs:
        previous = (
            f"{_rate(run.previous_pass_rate)} (`{run.previous_id}`)" if run.previous_id else "-"
        )
        lines.append(
            f"| {markdown_text(run.info.suite)} | `{run.info.run_id}` | "
            f"{markdown_text(run.info.agent)} | "
            f"{run.attempts} | {_rate(run.pass_rate)} | {previous} | {_delta(run.delta)} |"
        )
    lines += ["", "## New failures", ""]
    rows = _new_failure_rows(report)
    if rows:
        lines += ["Cases that failed today and passed in their suite's previous run.", ""]
        lines += ["| suite | case | verdict | failure types | run |", "|---|---|---|---|---|"]
        lines += [
            f"| {markdown_text(run.info.suite)} | {markdown_text(case)} | {verdict} | "
            f"{markdown_text(types)} | "
            f"`{run.info.run_id}` |"
            for run, case, verdict, types in rows
        ]
    else:
        lines.append("No case that passed in its suite's previous run failed today.")
    lines += ["", "## Failure clusters", ""]
    if report.clusters:
        lines += ["| failure type | attempts | cases | label | example |", "|---|---|---|---|---|"]
        for cluster in report.clusters:
            name = f"**{markdown_text(cluster.name)}**: " if cluster.name else ""
            example = cluster.example
            lines.append(
                f"| {markdown_text(cluster.failure_type)} | {cluster.count} | "
                f"{len(cluster.cases)} | {name}{markdown_text(cluster.label)} | "
                f"{markdown_text(example.case_id)} #{example.attempt}: "
                f"{markdown_text(_cut(example.reason))} |"
            )
    else:
        lines.append("No attempt failed.")
    lines += ["", "## Cost", ""]
    lines += ["| what | US dollars |", "|---|---|"]
    lines += [
        f"| {purpose} model calls (ledger) | {usd:.4f} |" for purpose, usd in report.spend.items()
    ]
    lines += [f"| attempts (their traces) | {report.cost_usd:.4f} |", ""]
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
        parts.append(
            '<p class="warning-box">More runs started that day than the report reads; '
            "the newest are shown.</p>"
        )
    if not report.runs:
        parts.append('<p id="no-runs">No run started that day.</p></section>')
        return "\n".join(parts)
    parts += ["<h2>Pass rates</h2>", '<table id="daily-runs">']
    parts.append(
        "<tr><th>suite</th><th>run</th><th>agent</th><th>attempts</th><th>pass rate</th>"
        "<th>previous run</th><th>change</th></tr>"
    )
    for run in report.runs:
        previous = (
            f"{_rate(run.previous_pass_rate)} ({run_link(run.previous_id)})"
            if run.previous_id
            else "-"
        )
        parts.append(
            f"<tr><td>{e(run.info.suite)}</td>"
            f"<td>{run_link(run.info.run_id)}</td>"
            f"<td>{e(run.info.agent)}</td><td>{run.attempts}</td><td>{_rate(run.pass_rate)}</td>"
            f"<td>{previous}</td><td>{e(_delta(run.delta))}</td></tr>"
        )
    parts += ["</table>", "<h2>New failures</h2>"]
    rows = _new_failure_rows(report)
    if rows:
        parts.append('<table id="new-failures">')
        parts.append(
            "<tr><th>suite</th><th>case</th><th>verdict</th><th>failure types</th><th>run</th></tr>"
        )
        parts += [
            f"<tr><td>{e(run.info.suite)}</td><td>{e(case)}</td><td>{e(verdict)}</td>"
            f"<td>{e(types)}</td><td>{run_link(run.info.run_id)}</td></tr>"
            for run, case, verdict, types in rows
        ]
        parts.append("</table>")
    else:
        parts.append("<p>No case that passed in its suite's previous run failed today.</p>")
    parts.append("<h2>Failure clusters</h2>")
    if report.clusters:
        parts.append('<table id="failure-clusters">')
        parts.append(
            "<tr><th>failure type</th><th>attempts</th><th>cases</th><th>label</th>"
            "<th>example</th></tr>"
        )
        for cluster in report.clusters:
            name = f"<strong>{e(cluster.name)}</strong><br>" if cluster.name else ""
            example = cluster.example
            parts.append(
                f"<tr><td>{e(cluster.failure_type)}</td><td>{cluster.count}</td>"
                f"<td>{e(', '.join(cluster.cases))}</td><td>{name}{e(cluster.label)}</td>"
                f"<td>{e(example.case_id)} #{example.attempt}: {e(_cut(example.reason))}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No attempt failed.</p>")
    parts += [
        "<h2>Cost</h2>",
        '<table id="daily-cost">',
        "<tr><th>what</th><th>US dollars</th></tr>",
    ]
    parts += [
        f"<tr><td>{e(purpose)} model calls (ledger)</td><td>{usd:.4f}</td></tr>"
        for purpose, usd in report.spend.items()
    ]
    parts += [f"<tr><td>attempts (their traces)</td><td>{report.cost_usd:.4f}</td></tr>"]
    parts += ["</table>", "</section>"]
    return "\n".join(parts)


_STYLE = """body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;
padding:.3rem .6rem;text-align:left;vertical-align:top}th{background:#f4f4f4}"""


def render_daily_html(report: DailyReport) -> str:
    """The daily report as a standalone HTML page (no scripts, no external files)."""
    title = f"Seatrial daily report {report.day.isoformat()}"
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
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
