"""Statistics in plain words: what a McNemar p means for the person deciding whether to ship,
said next to the figure, and a legend for the intervals, shown once.

The figures are the statistics module's (:mod:`seatrial.compare._stats`); this module only
reads them. A phrase is one of a few fixed sentences, chosen by the same threshold the reader
would use (``p < 0.05``), so a change the data supports never reads as noise and noise never
reads as a change.
"""

from __future__ import annotations

from seatrial.compare._stats import Paired
from seatrial.i18n import gettext as _

SIGNIFICANCE = 0.05
"""Below this McNemar p, the cases that changed moved one way more than chance explains."""


def paired_in_words(paired: Paired) -> str:
    """What McNemar's p on the cases both runs share says: no case changed, a significant
    change (which way), as many got worse as better, or too few to tell from noise."""
    worse, better = paired.base_only, paired.cand_only
    if worse + better == 0:
        return _("no case changed its outcome")
    if paired.p_value < SIGNIFICANCE:
        if worse > better:
            return _("significant: the candidate fails more often than the baseline")
        return _("significant: the candidate passes more often than the baseline")
    if worse == better:
        return _("as many cases got worse as got better: no change either way")
    return _("too few cases to tell a change from noise")


def agents_in_words(significant: bool, ahead: str, behind: str, differing: int) -> str:
    """What a leaderboard's McNemar test between two agents says: ``behind`` fails more
    often than ``ahead`` (significant), they fail the same cases (``differing`` == 0), or
    too few cases differ to tell them apart."""
    if significant:
        return _("significant: {behind} fails more often than {ahead}").format(
            behind=behind, ahead=ahead
        )
    if differing == 0:
        return _("they pass and fail the same cases")
    return _("too few cases to tell a difference from noise")


def with_meaning(figure: str, meaning: str) -> str:
    """``figure`` followed by what it means: ``p = 0.5 — too few cases ...``."""
    return _("{figure} — {meaning}").format(figure=figure, meaning=meaning)


def interval_legend() -> str:
    """The legend shown once, before the first interval and p of a comparison."""
    return _(
        "how to read: [low, high] is where the true rate most likely lies ({level} Wilson "
        "interval for a pass rate, Newcombe for a change in points); a change whose interval "
        "spans 0 may be noise; p is McNemar's test on the cases whose outcome changed, below "
        "{alpha} means a real change"
    ).format(level="95%", alpha=SIGNIFICANCE)
