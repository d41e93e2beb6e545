"""A comparison as Markdown (ready to paste as a pull-request comment) and as terminal text,
in the reader's language, each McNemar p said in plain words beside it."""

from __future__ import annotations

from rich.markup import escape

from seatrial.compare._compare import CaseChange, Comparison, GroupDelta, MetricDelta
from seatrial.compare._plain import interval_legend, paired_in_words, with_meaning
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _
from seatrial.record import failure_type_word, verdict_word

TRANSITION_TITLES = {
    "regressed": N_("Regressed"),
    "fixed": N_("Fixed"),
    "still_failing": N_("Still failing"),
    "new": N_("New"),
    "removed": N_("Removed"),
    "flaky": N_("Flaky (kept out of the deltas)"),
    "still_passing": N_("Still passing"),
}
"""How reports title each transition, in the order they list them (English; ``_(title)``
reads one in the reader's language)."""

_LISTED = {k: v for k, v in TRANSITION_TITLES.items() if k != "still_passing"}
"""The transitions the text and Markdown list case by case (still passing is only counted)."""


def _verdict_change(c: CaseChange) -> str:
    before = f"{verdict_word(c.base_verdict)} {c.base_passes}" if c.base_verdict else "-"
    after = f"{verdict_word(c.cand_verdict)} {c.cand_passes}" if c.cand_verdict else "-"
    failures = pgettext("list separator", ", ").join(
        failure_type_word(f) for f in c.cand_failures or c.base_failures
    )
    said = _(" ({failure_types})").format(failure_types=failures) if failures else ""
    return f"{before} -> {after}{said}"


def change_text(group: GroupDelta) -> str:
    """The Newcombe change in points: ``-18.2 pts [-40.1, +3.5]``."""
    change = group.change
    return _("{estimate} pts [{low}, {high}]").format(
        estimate=f"{change.estimate * 100:+.1f}",
        low=f"{change.low * 100:+.1f}",
        high=f"{change.high * 100:+.1f}",
    )


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


def _titled(title: str, count: int) -> str:
    """A transition's title and how many cases it lists: ``Regressed (3)``."""
    return _("{title} ({count})").format(title=_(title), count=count)


def p_text(group: GroupDelta, figure: str) -> str:
    """``figure`` (the group's McNemar p as the caller writes it) and what it means."""
    return with_meaning(figure, paired_in_words(group.paired))


def headline(comparison: Comparison) -> str:
    """One line: how many cases regressed and fixed, and the overall change, its McNemar p
    said in plain words."""
    overall = comparison.overall
    return _(
        "{regressed} regressed, {fixed} fixed, {still_failing} still failing, {flaky} flaky; "
        "pass rate {base} -> {candidate}, change {change}, {p}"
    ).format(
        regressed=len(comparison.of("regressed")),
        fixed=len(comparison.of("fixed")),
        still_failing=len(comparison.of("still_failing")),
        flaky=len(comparison.of("flaky")),
        base=overall.base.format(),
        candidate=overall.cand.format(),
        change=change_text(overall),
        p=p_text(overall, f"McNemar p = {overall.paired.p_value:.3g}"),
    )


def _changed_failure_types(comparison: Comparison) -> str:
    return pgettext("list separator", ", ").join(
        f"{failure_type_word(name)} {before} -> {after}"
        for name, (before, after) in comparison.failure_types.items()
        if before != after
    )


def to_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown."""
    base, cand = comparison.base.info, comparison.cand.info
    lines = [
        _("## Seatrial: `{candidate}` vs baseline `{base}`").format(
            candidate=cand.run_id, base=base.run_id
        ),
        "",
        _("Suite **{suite}**; agent `{base}` -> `{candidate}`.").format(
            suite=cand.suite, base=base.agent, candidate=cand.agent
        ),
        "",
        f"**{headline(comparison)}**",
        "",
        interval_legend(),
        "",
    ]
    for transition, title in _LISTED.items():
        changes = comparison.of(transition)  # type: ignore[arg-type]
        if not changes:
            continue
        lines += [
            "### " + _titled(title, len(changes)),
            "",
            _("| case | category | base -> candidate |"),
            "|---|---|---|",
        ]
        for c in changes:
            extra = f" - {c.flaky}" if c.flaky else ""
            lines.append(f"| `{c.case_id}` | {c.category or '-'} | {_verdict_change(c)}{extra} |")
        lines.append("")
    lines += [
        _("### Pass rate by category (attempts; {level} intervals; flaky cases left out)").format(
            level="95%"
        ),
        "",
        _("| category | cases | base | candidate | change | McNemar p |"),
        "|---|---|---|---|---|---|",
    ]
    for group in [*comparison.categories, comparison.overall]:
        name = _("**all**") if group is comparison.overall else (group.name or "-")
        lines.append(
            f"| {name} | {group.cases} | {group.base.format()} | {group.cand.format()} | "
            f"{change_text(group)} | {p_text(group, f'{group.paired.p_value:.3g}')} |"
        )
    lines += [
        "",
        _("### Metrics (per attempt)"),
        "",
        _("| metric | base | candidate | change |"),
        "|---|---|---|---|",
    ]
    for metric in comparison.metrics:
        lines.append(
            f"| {_(metric.name)} | {metric_number(metric.base)} | {metric_number(metric.cand)} | "
            f"{_metric_change(metric)} |"
        )
    if comparison.failure_types:
        lines += [
            "",
            _("### Failure types (attempts)"),
            "",
            _("| failure type | base | candidate |"),
            "|---|---|---|",
        ]
        for name, (before, after) in comparison.failure_types.items():
            lines.append(f"| {failure_type_word(name)} | {before} | {after} |")
    return "\n".join(lines) + "\n"


def to_text(comparison: Comparison) -> list[str]:
    """The comparison as lines of terminal text with rich markup."""
    base, cand = comparison.base.info, comparison.cand.info
    lines = [
        _(
            "[bold]compare[/] {base} ({base_agent}) -> {candidate} ({candidate_agent}), "
            "suite {suite}"
        ).format(
            base=base.run_id,
            base_agent=base.agent,
            candidate=cand.run_id,
            candidate_agent=cand.agent,
            suite=cand.suite,
        ),
        headline(comparison),
        f"[dim]{escape(interval_legend())}[/]",
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
        lines.append(f"[{colours[transition]}]{_titled(title, len(changes))}[/]")
        for c in changes:
            extra = f" - {c.flaky}" if c.flaky else ""
            lines.append(f"  {c.case_id}  {_verdict_change(c)}{extra}")
    lines.append(
        _("pass rate by category (change, {level} interval, McNemar p):").format(level="95%")
    )
    for group in [*comparison.categories, comparison.overall]:
        name = _("all") if group is comparison.overall else (group.name or "-")
        lines.append(
            "  "
            + _("{name}: {base} -> {candidate}  {change}  {p} ({cases})").format(
                name=name,
                base=group.base.format(),
                candidate=group.cand.format(),
                change=change_text(group),
                p=p_text(group, f"p={group.paired.p_value:.3g}"),
                cases=ngettext("{count} case", "{count} cases", group.cases).format(
                    count=group.cases
                ),
            )
        )
    lines.append(_("metrics per attempt:"))
    for metric in comparison.metrics:
        lines.append(
            "  "
            + _("{metric}: {base} -> {candidate} ({change})").format(
                metric=_(metric.name),
                base=metric_number(metric.base),
                candidate=metric_number(metric.cand),
                change=_metric_change(metric),
            )
        )
    shifted = _changed_failure_types(comparison)
    if shifted:
        lines.append(_("failure types: {shifted}").format(shifted=shifted))
    return lines
