"""A leaderboard for people: a terminal table, Markdown, and JSON.

Every view shows the same figures and the same sentences: the table (one row per agent, best
first), then each difference from the best in words, then how it was tested.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from seatrial.compare._leaderboard import Leaderboard, LeaderboardEntry
from seatrial.compare._markdown import markdown_text
from seatrial.i18n import N_, pgettext
from seatrial.i18n import gettext as _
from seatrial.record import failure_type_word

COLUMNS = (
    "#",
    N_("Agent"),
    N_("Success [{level} CI]"),
    "pass^k",
    "pass@k",
    "p50 / p95",
    N_("Tokens"),
    N_("$ / success"),
    N_("Tools ok"),
    N_("Failures"),
)
"""The table's columns, in order (the terminal and Markdown views share them), in English:
:func:`column` reads one in the reader's language."""


def column(i: int) -> str:
    """The name of column ``i`` in the reader's language."""
    return _(COLUMNS[i]).format(level="95%") if COLUMNS[i] != "#" else "#"


def legend(board: Leaderboard) -> str:
    """A line saying what the interval and pass^k / pass@k mean, for a board that shows them
    (pass^k only with repeats)."""
    k = max((entry.k for entry in board.entries), default=0)
    if k > 1:
        return _(
            "Success: share of attempts that pass, [low, high] where the true rate most likely "
            "lies; pass^k: chance that all {k} repeats of a case pass (how reliably it "
            "works); pass@k: chance that at least one does"
        ).format(k=k)
    return _(
        "Success: share of attempts that pass, [low, high] where the true rate most likely lies"
    )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _dollars(value: float | None) -> str:
    if value is None:
        return "-"
    # Cheap models cost fractions of a cent per success: keep two significant digits.
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"


def _cells(entry: LeaderboardEntry) -> list[str]:
    s = entry.success
    latency = (
        "-"
        if entry.latency_p50_ms is None or entry.latency_p95_ms is None
        else f"{entry.latency_p50_ms:.0f} / {entry.latency_p95_ms:.0f} ms"
    )
    tools = (
        "-"
        if entry.tool_success is None
        else _("{share} of {calls}").format(
            share=f"{entry.tool_success:.0%}", calls=entry.tool_calls
        )
    )
    failures = pgettext("list separator", ", ").join(
        f"{failure_type_word(name)} {count}" for name, count in entry.failure_types.items()
    )
    return [
        str(entry.rank),
        entry.agent,
        f"{s['estimate']:.1%} [{s['low']:.1%}, {s['high']:.1%}]",
        _percent(entry.pass_hat_k),
        _percent(entry.pass_at_k),
        latency,
        f"{entry.mean_tokens:.0f}",
        _dollars(entry.cost_per_success),
        tools,
        failures or "-",
    ]


def _title(board: Leaderboard) -> str:
    where = (
        _("benchmark {bench_id}").format(bench_id=board.bench_id)
        if board.bench_id
        else _("leaderboard")
    )
    k = max((entry.k for entry in board.entries), default=0)
    title = _("{where}: suite {suite}").format(where=where, suite=board.suite or "-")
    return title + (_(", k = {k} repeats").format(k=k) if k > 1 else "")


_OUTCOMES = (0, 1, 2, 3, 4, 9)
"""The columns of the first of two tables, when one is too wide: how well each agent did."""
_SPENDING = (0, 1, 5, 6, 7, 8)
"""The columns of the second: what it took."""
_WORDS = (1, 9)
"""Columns of words (the agent, the failure types): they wrap; figures never do."""


def _table(board: Leaderboard, columns: Sequence[int], title: str | None) -> Table:
    table = Table(title=None if title is None else escape(title), title_justify="left")
    for i in columns:
        words = i in _WORDS
        table.add_column(
            column(i),
            justify="left" if words else "right",
            no_wrap=not words,
            overflow="fold" if words else "ellipsis",
        )
    for entry in board.entries:
        cells = _cells(entry)
        table.add_row(*(escape(cells[i]) for i in columns))
    return table


_WORDS_MIN = 12
"""Width a column of words gets before it wraps."""


def _width(board: Leaderboard) -> int:
    """Columns the whole table needs: the widest figure of each column, a little for the
    columns of words, and the borders and padding (three per column, and one)."""
    rows = [_cells(entry) for entry in board.entries]
    widths = [
        max(cell_len(column(i)), *(cell_len(row[i]) for row in rows))
        if i not in _WORDS
        else min(_WORDS_MIN, max(cell_len(column(i)), *(cell_len(row[i]) for row in rows)))
        for i in range(len(COLUMNS))
    ]
    return sum(widths) + 3 * len(COLUMNS) + 1


class _Tables:
    """The board's table, or two narrower ones (outcomes, then spending) where it is too
    wide for the terminal."""

    def __init__(self, board: Leaderboard) -> None:
        self.board = board

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        title = _title(self.board)
        if _width(self.board) <= options.max_width:
            yield _table(self.board, range(len(COLUMNS)), title)
            return
        yield _table(self.board, _OUTCOMES, title)
        yield _table(self.board, _SPENDING, None)


def leaderboard_table(board: Leaderboard) -> RenderableType:
    """The board for a terminal: its table (split in two on a narrow terminal), then the
    differences and the method."""
    parts: list[RenderableType] = [_Tables(board)] if board.entries else [Text(_title(board))]
    if board.entries:
        parts.append(Text(legend(board), style="dim"))
    for difference in board.differences:
        style = "bold" if difference.significant else "dim"
        parts.append(Text(difference.sentence, style=style))
    if board.method:
        parts.append(Text(board.method, style="dim"))
    if not board.entries:
        parts.append(Text(_("No stored attempt to rank.")))
    return Group(*parts)


def leaderboard_markdown(board: Leaderboard) -> str:
    """The board as GitHub Markdown: a heading, a table, the differences, the method."""
    lines = [f"### {markdown_text(_title(board))}", ""]
    if not board.entries:
        return "\n".join([*lines, _("No stored attempt to rank."), ""])
    lines.append("| " + " | ".join(column(i) for i in range(len(COLUMNS))) + " |")
    lines.append(
        "|" + "|".join("---" if i in _WORDS else "---:" for i in range(len(COLUMNS))) + "|"
    )
    for entry in board.entries:
        lines.append("| " + " | ".join(markdown_text(cell) for cell in _cells(entry)) + " |")
    lines += ["", markdown_text(legend(board)), ""]
    for difference in board.differences:
        sentence = markdown_text(difference.sentence)
        lines.append(f"- **{sentence}**" if difference.significant else f"- {sentence}")
    if board.method:
        lines.extend(["", f"_{markdown_text(board.method)}_"])
    lines.append("")
    return "\n".join(lines)


def leaderboard_json(board: Leaderboard) -> str:
    """The board as JSON (the fields of :class:`Leaderboard`), indented."""
    return board.model_dump_json(indent=2)
