"""A comparison as Markdown (ready to paste as a pull-request comment) and as terminal text."""

from __future__ import annotations

from seatrial.compare._compare import CaseChange, Comparison, GroupDelta, MetricDelta
from seatrial.i18n import N_

TRANSITION_TITLES = {
    "regressed": N_("Regressed"),
    "fixed": N_("Fixed"),
    "still_failing": N_("Still failing"),
    "new": N_("New"),
    "removed": N_("Removed"),
    "flaky": N_("Flaky (kept out of the deltas)"),
    "still_passing": N_("Still passing"),
}
"""How reports title each transition, in the order they list them (marked: the dashboard
shows them translated)."""

_LISTED = {k: v for k, v in TRANSITION_TITLES.items() if k != "still_passing"}
"""The transitions the text and Markdown list case by case (still passing is only counted)."""


def _verdict_change(c: CaseChange) -> str:
    before = f"{c.base_verdict} {c.base_passes}" if c.base_verdict else "-"
    after = f"{c.cand_verdict} {c.cand_passes}" if c.cand_verdict else "-"
    failures = ", ".join(c.cand_failures or c.base_failures)
    return f"{before} -> {after}" + (f" ({failures})" if failures else "")


def change_text(group: GroupDelta) -> str:
    """The Newcombe change in points: ``-18.2 pts [-40.1, +3.5]``."""
    change = group.change
    return f"{change.estimate * 100:+.1f} pts [{change.low * 100:+.1f}, {change.high * 100:+.1f}]"


def metric_number(value: float | None) -> str:
    """A metric figure: ``-`` for none, four decimals under 1, else one."""
    if value is None:
        return "-"
    return f"{value:.4f}" if abs(value) < 1 and value != 0 else f"{value:,.1f}"


def _metric_change(metric: MetricDelta) -> str:
    change = metric.change
    if change is None:
        return "-"
    if metric.base:
        return f"{change:+,.2f} ({change / metric.base:+.0%})"
    return f"{change:+,.2f}"


def headline(comparison: Comparison) -> str:
    """One line: how many cases regressed and fixed, and the overall change."""
    regressed = len(comparison.of("regressed"))
    fixed = len(comparison.of("fixed"))
    return (
        f"{regressed} regressed, {fixed} fixed, {len(comparison.of('still_failing'))} still "
        f"failing, {len(comparison.of('flaky'))} flaky; pass rate "
        f"{comparison.overall.base.format()} -> {comparison.overall.cand.format()}, change "
        f"{change_text(comparison.overall)}, McNemar p = {comparison.overall.paired.p_value:.3g}"
    )


def to_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown."""
    base, cand = comparison.base.info, comparison.cand.info
    lines = [
        f"## Seatrial: `{cand.run_id}` vs baseline `{base.run_id}`",
        "",
        f"Suite **{cand.suite}**; agent `{base.agent}` -> `{cand.agent}`.",
        "",
        f"**{headline(comparison)}**",
        "",
    ]
    for transition, title in _LISTED.items():
        changes = comparison.of(transition)  # type: ignore[arg-type]
        if not changes:
            continue
        lines += [
            f"### {title} ({len(changes)})",
            "",
            "| case | category | base -> candidate |",
            "|---|---|---|",
        ]
        for c in changes:
            extra = f" - {c.flaky}" if c.flaky else ""
            lines.append(f"| `{c.case_id}` | {c.category or '-'} | {_verdict_change(c)}{extra} |")
        lines.append("")
    lines += [
        "### Pass rate by category (attempts; 95% intervals; flaky cases left out)",
        "",
        "| category | cases | base | candidate | change | McNemar p |",
        "|---|---|---|---|---|---|",
    ]
    for group in [*comparison.categories, comparison.overall]:
        name = "**all**" if group is comparison.overall else (group.name or "-")
        lines.append(
            f"| {name} | {group.cases} | {group.base.format()} | {group.cand.format()} | "
            f"{change_text(group)} | {group.paired.p_value:.3g} |"
        )
    lines += [
        "",
        "### Metrics (per attempt)",
        "",
        "| metric | base | candidate | change |",
        "|---|---|---|---|",
    ]
    for metric in comparison.metrics:
        lines.append(
            f"| {metric.name} | {metric_number(metric.base)} | {metric_number(metric.cand)} | "
            f"{_metric_change(metric)} |"
        )
    if comparison.failure_types:
        lines += [
            "",
            "### Failure types (attempts)",
            "",
            "| failure type | base | candidate |",
            "|---|---|---|",
        ]
        for name, (before, after) in comparison.failure_types.items():
            lines.append(f"| {name} | {before} | {after} |")
    return "\n".join(lines) + "\n"


def to_text(comparison: Comparison) -> list[str]:
    """The comparison as lines of terminal text with rich markup."""
    base, cand = comparison.base.info, comparison.cand.info
    lines = [
        f"[bold]compare[/] {base.run_id} ({base.agent}) -> {cand.run_id} ({cand.agent}), "
        f"suite {cand.suite}",
        headline(comparison),
    ]
    colours = {
        "regressed": "red",
        "fixed": "green",
        "still_failing": "yellow",
        "flaky": "magenta",
        "new": "cyan",
        "removed": "cyan",
    }
    for transition, title in _LISTED.items():
        changes = comparison.of(transition)  # type: ignore[arg-type]
        if not changes:
            continue
        lines.append(f"[{colours[transition]}]{title} ({len(changes)})[/]")
        for c in changes:
            extra = f" - {c.flaky}" if c.flaky else ""
            lines.append(f"  {c.case_id}  {_verdict_change(c)}{extra}")
    lines.append("pass rate by category (change, 95% interval, McNemar p):")
    for group in [*comparison.categories, comparison.overall]:
        name = "all" if group is comparison.overall else (group.name or "-")
        lines.append(
            f"  {name}: {group.base.format()} -> {group.cand.format()}  {change_text(group)}  "
            f"p={group.paired.p_value:.3g} ({group.cases} cases)"
        )
    lines.append("metrics per attempt:")
    for metric in comparison.metrics:
        lines.append(
            f"  {metric.name}: {metric_number(metric.base)} -> {metric_number(metric.cand)} "
            f"({_metric_change(metric)})"
        )
    shifted = {n: v for n, v in comparison.failure_types.items() if v[0] != v[1]}
    if shifted:
        lines.append(
            "failure types: "
            + ", ".join(f"{n} {before} -> {after}" for n, (before, after) in shifted.items())
        )
    return lines
