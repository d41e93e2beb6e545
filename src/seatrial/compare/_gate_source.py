"""What a run stores about its gates when it starts, and whether their source changed since.

A run keeps the gates it was started with, so a verdict never depends on a file edited later.
:func:`gates_changed` is the one place that reads a gates source from disk again: only to warn
that the file now says something else. Evaluation itself never touches the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from seatrial.case import (
    GateSpec,
    gates_hash,
    load_gates,
    load_gates_section,
    load_suite,
    parse_yaml,
    read_text,
)
from seatrial.errors import ConfigError, SeatrialError
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext
from seatrial.record import RunSettings


def stored_gates(settings: RunSettings) -> list[GateSpec]:
    """The gates a run stored when it started."""
    return [GateSpec.model_validate(g) for g in settings.gates]


def gate_settings(gates: list[GateSpec], source: str) -> dict[str, Any]:
    """What a run stores about its gates when it starts: the gates, their hash, their source
    (``file:PATH``, ``suite:PATH``, ``config:PATH``, or ``tier:NAME:PATH`` for the gates
    written under ``tiers: NAME:`` of seatrial.yaml)."""
    return {
        "gates": [g.model_dump(mode="json", exclude_defaults=True) for g in gates],
        "gates_hash": gates_hash(gates),
        "gates_source": source,
    }


def gates_written(settings: RunSettings) -> bool:
    """Whether a run was started with a gate written anywhere: ``gates:`` (a gates file, the
    suite's, seatrial.yaml's or a CI tier's, stored with the run) or the suite's
    ``gate: {min_pass_rate}``. Without one its gate is "every case passes"."""
    return bool(settings.gates) or settings.gate.get("min_pass_rate") is not None


def stored_baseline_id(settings: RunSettings) -> str | None:
    """The baseline run a run stored when it started (resolved then), if any."""
    return (settings.baseline.run_id if settings.baseline is not None else None) or None


def gates_changed(settings: RunSettings, project_dir: Path | None = None) -> str | None:
    """A warning when the gates' source now differs from what the run stored; else None.

    Reads the source from disk: a gates file, a suite file, or only the ``gates:`` of
    seatrial.yaml (the project's other settings are not this check's business). A source that
    is gone is not reported (nothing to compare with).
    """
    source = settings.gates_source
    stored = settings.gates_hash
    if not source or not stored:
        return None
    kind, _colon, where = str(source).partition(":")
    tier = ""
    if kind == "tier":
        tier, _colon, where = where.partition(":")
    path = Path(where)
    if project_dir is not None and not path.is_absolute():
        path = project_dir / path
    if not path.is_file():
        return None
    try:
        if kind == "file":
            now = load_gates(path)
        elif kind == "suite":
            now = load_suite(path).gates
        elif kind == "tier":
            now = _tier_gates(path, tier)
        else:
            now = load_gates_section(path)
    except SeatrialError as exc:
        return (
            f"the gates' source {path} no longer loads ({exc}); "
            "the verdict uses the gates as they were when the run started"
        )
    if gates_hash(now) == stored:
        return None
    return (
        f"the gates in {path} changed after this run started (hash {stored[:12]} then, "
        f"{gates_hash(now)[:12]} now); the verdict uses the gates as they were when it started"
    )


def _tier_gates(path: Path, tier: str) -> list[GateSpec]:
    """The gates written under ``tiers: TIER: gates:`` of seatrial.yaml, read alone."""
    text, problems = read_text(path, str(path))
    document = parse_yaml(text or "", str(path))
    if problems or document.problems:
        raise ConfigError(str((problems + document.problems)[0]))
    written: Any = document.data
    for key in ("tiers", tier, "gates"):
        written = written.get(key) if isinstance(written, dict) else None
    if not isinstance(written, list):
        raise ConfigError(_("tiers: {tier}: gates: is no longer a list of gates").format(tier=tier))
    try:
        return TypeAdapter(list[GateSpec]).validate_python(written)
    except ValidationError as exc:
        raise ConfigError(
            ngettext(
                "tiers: {tier}: gates: {n} problem",
                "tiers: {tier}: gates: {n} problems",
                exc.error_count(),
            ).format(tier=tier, n=exc.error_count())
        ) from exc
