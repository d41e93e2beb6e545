"""The calibration policy: may this judge's FAIL fail a run?

Only when the newest calibration of its (model, prompt hash) reached ``judge.min_agreement``
on at least ``judge.min_labels`` labelled items. Everything that asks (the runner when a run
starts, ``seatrial judge calibrate`` when it stores a new calibration) asks :func:`meets_bar`,
so the bar cannot differ between the two.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seatrial.i18n import Message, english, phrased
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.judge._llm import Judge
    from seatrial.judge._settings import JudgeSettings
    from seatrial.store import Calibration


def meets_bar(calibration: Calibration | None, min_agreement: float, min_labels: int) -> bool:
    """Whether a calibration lets the judge's FAIL fail a run."""
    return (
        calibration is not None
        and calibration.items >= min_labels
        and calibration.agreement >= min_agreement
    )


def calibration_alarm(
    previous: Calibration | None,
    current: Calibration,
    min_agreement: float,
    min_labels: int,
) -> str | None:
    """The alarm to print when the judge met the bar last time and no longer does.

    ``previous`` is the calibration of the same (model, prompt hash) before ``current``.
    """
    if not meets_bar(previous, min_agreement, min_labels) or meets_bar(
        current, min_agreement, min_labels
    ):
        return None
    assert previous is not None  # meets_bar said so
    return _(
        "ALARM: judge {model} (prompt {version}, hash {hash}) agreed with people on "
        "{before} of {before_items} items last time and on {now} of {items} items now, below "
        "the bar (judge.min_agreement {min_agreement} on at least {min_labels} items): its "
        "FAIL verdicts are advisory (WARNING) again until it is recalibrated; check the judge "
        "model's version and the labels"
    ).format(
        model=current.judge_model,
        version=current.prompt_version or "?",
        hash=current.prompt_hash[:12],
        before=f"{previous.agreement:.1%}",
        before_items=previous.items,
        now=f"{current.agreement:.1%}",
        items=current.items,
        min_agreement=f"{min_agreement:.0%}",
        min_labels=min_labels,
    )


@dataclass(frozen=True)
class JudgeTrust:
    """Whether the judge's FAIL may fail an attempt, and why (quoted in every report)."""

    calibrated: bool
    """True when the latest calibration met both bars."""
    reason: str
    """One line saying why, with what to do when it is not calibrated (in English: what the
    run's settings and the attempts' results store)."""
    agreement: float | None = None
    """The latest calibration's agreement with people, if there is one."""
    items: int | None = None
    """How many labelled items that calibration used."""
    alarm: str | None = None
    """Set when the latest calibration fell below the bar the previous one met (English)."""
    said: Message | None = None
    """``reason`` as a message, rendered in the reader's language where it is printed."""
    alarm_said: Message | None = None
    """``alarm`` as a message."""


def judge_trust(
    model: str,
    prompt_version: str,
    prompt_hash: str,
    history: list[Calibration],
    settings: JudgeSettings,
) -> JudgeTrust:
    """Decide whether to trust the judge from ``history`` (this model and prompt hash's
    calibrations, newest first) against ``judge.min_agreement`` and ``judge.min_labels``."""
    who = phrased(
        "judge {model} prompt {version} (hash {hash})",
        model=model,
        version=prompt_version,
        hash=prompt_hash[:12],
    )
    fix = phrased("run `seatrial judge calibrate --judge {model} --labels FILE`", model=model)
    required = format(settings.min_agreement, ".0%")
    bar = phrased(
        "judge.min_agreement {share} on judge.min_labels {count} items",
        share=required,
        count=settings.min_labels,
    )
    if not history:
        said = phrased(
            "{who} is not calibrated: no calibration yet; its FAIL is advisory; {fix}",
            who=who,
            fix=fix,
        )
        return JudgeTrust(False, english(said), said=said)
    latest = history[0]
    share = format(latest.agreement, ".1%")
    measured = phrased(
        "{share} agreement on {count} labelled items", share=share, count=latest.items
    )
    if meets_bar(latest, settings.min_agreement, settings.min_labels):
        said = phrased(
            "{who} is calibrated: {measured} (bar: {bar})", who=who, measured=measured, bar=bar
        )
        return JudgeTrust(True, english(said), latest.agreement, latest.items, said=said)
    alarm = None
    if len(history) > 1 and meets_bar(history[1], settings.min_agreement, settings.min_labels):
        before = history[1]
        before_share = format(before.agreement, ".1%")
        alarm = phrased(
            "ALARM: {who} fell below the bar: {before} on {before_items} items, now {measured} "
            "(bar: {bar}); its FAIL no longer fails runs until it is recalibrated",
            who=who,
            before=before_share,
            before_items=before.items,
            measured=measured,
            bar=bar,
        )
    said = phrased(
        "{who} is not calibrated: {measured}, under {bar}; its FAIL is advisory; {fix}",
        who=who,
        measured=measured,
        bar=bar,
        fix=fix,
    )
    return JudgeTrust(
        False,
        english(said),
        latest.agreement,
        latest.items,
        english(alarm) if alarm is not None else None,
        said=said,
        alarm_said=alarm,
    )


def trust_of(judge: Judge, calibrations: Iterable[Calibration]) -> JudgeTrust:
    """How far ``judge`` is trusted, from ``calibrations`` (newest first, of any judge): only those
    of its model and pointwise prompt hash count, since a calibration vouches for exactly the
    prompt it measured."""
    history = [
        c
        for c in calibrations
        if c.judge_model == judge.model and c.prompt_hash == judge.prompt_hash
    ]
    return judge_trust(
        judge.model, judge.prompt_version, judge.prompt_hash, history, judge.settings
    )
