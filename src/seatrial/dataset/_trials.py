"""Numbering a task's trials as Seatrial's attempts (1-based, 1..n with no gaps)."""

from __future__ import annotations

from collections.abc import Sequence

from seatrial.dataset._common import Warnings
from seatrial.i18n import gettext as _


def number_trials(
    case_id: str, trials: Sequence[tuple[int, int | None]], warnings: Warnings
) -> list[tuple[int, int]]:
    """``(position in the file, attempt)`` for each ``(position, 0-based trial)`` of a task.

    Trials 0..n-1 become attempts 1..n. A task whose trial numbers are missing is numbered in
    file order, and one whose numbers repeat or leave gaps is renumbered in trial order; both
    are warned about, never done silently.
    """
    given = [trial for _, trial in trials if trial is not None]
    if len(given) == len(trials) and sorted(given) == list(range(len(given))):
        return sorted(((pos, trial + 1) for pos, trial in trials if trial is not None), key=_at)
    if len(given) < len(trials):
        warnings.add(
            "trial",
            _("trial numbers are missing: each task's trials were numbered in file order"),
            case_id,
        )
        ordered = list(trials)
    else:
        warnings.add(
            "trial-gaps",
            _("trial numbers repeat or leave gaps: renumbered 1..n in trial order"),
            case_id,
        )
        ordered = sorted(trials, key=lambda item: (item[1] or 0, item[0]))
    return [(pos, attempt) for attempt, (pos, _) in enumerate(ordered, start=1)]


def _at(item: tuple[int, int]) -> int:
    return item[1]
