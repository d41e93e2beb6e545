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
    return (
        f"ALARM: judge {current.judge_model} (prompt {current.prompt_version or '?'}, hash "
        f"{current.prompt_hash[:12]}) agreed with people on {previous.agreement:.1%} of "
        f"{previous.items} items last time and on {current.agreement:.1%} of {current.items} items "
        f"now, below the bar (judge.min_agreement {min_agreement:.0%} on at least "
        f"{min_labels} items): its FAIL verdicts are advisory (WARNING) again until it is "
        "recalibrated; check the judge model's version and the labels"
    )


@dataclass(frozen=True)
class JudgeTrust:
    """Whether the judge's FAIL may fail an attempt, and why (quoted in every report)."""

    calibrated: bool
    """True when the latest calibration met both bars."""
    reason: str
    """One line saying why, with what to do when it is not calibrated."""
    agreement: float | None = None
    """The latest calibration's agreement with people, if there is one."""
    items: int | None = None
    """How many labelled items that calibration used."""
    alarm: str | None = None
    """Set when the latest calibration fell below the bar the previous one met."""


def judge_trust(
    model: str,
    prompt_version: str,
    prompt_hash: str,
    history: list[Calibration],
    settings: JudgeSettings,
) -> JudgeTrust:
    """Decide whether to trust the judge from ``history`` (this model and prompt hash's
    calibrations, newest first) against ``judge.min_agreement`` and ``judge.min_labels``."""
    who = f"judge {model} prompt {prompt_version} (hash {prompt_hash[:12]})"
    fix = f"run `seatrial judge calibrate --judge {model} --labels FILE`"
    bar = (
        f"judge.min_agreement {settings.min_agreement:.0%} on "
        f"judge.min_labels {settings.min_labels} items"
    )
    if not history:
        return JudgeTrust(
            False, f"{who} is not calibrated: no calibration yet; its FAIL is advisory; {fix}"
        )
    latest = history[0]
    measured = f"{latest.agreement:.1%} agreement on {latest.items} labelled items"
    if meets_bar(latest, settings.min_agreement, settings.min_labels):
        return JudgeTrust(
            True, f"{who} is calibrated: {measured} (bar: {bar})", latest.agreement, latest.items
        )
    alarm = None
    if len(history) > 1 and meets_bar(history[1], settings.min_agreement, settings.min_labels):
        before = history[1]
        alarm = (
            f"ALARM: {who} fell below the bar: {before.agreement:.1%} on {before.items} items, "
            f"now {measured} (bar: {bar}); its FAIL no longer fails runs until it is "
            "recalibrated"
        )
    return JudgeTrust(
        False,
        f"{who} is not calibrated: {measured}, under {bar}; its FAIL is advisory; {fix}",
        latest.agreement,
        latest.items,
        alarm,
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
