"""What changed between a stored attempt's snapshot and its replay.

Seatrial, Python, the agent's module file, the agent's own description (prompt and tool
schema hashes, version, model), the case as the suite file now has it, the fixture, the
gateway configuration and the models answering. A replay says what changed; it never refuses
to run because of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seatrial.case import Case, load_suite
from seatrial.errors import SeatrialError
from seatrial.record import AttemptSnapshot, RunSnapshot
from seatrial.run._snapshot import case_hash, gateway_config_hash

if TYPE_CHECKING:
    from seatrial.gateway import GatewayConfig


@dataclass(frozen=True)
class SnapshotChange:
    """One thing that is not what it was when the attempt was stored."""

    what: str
    """What changed, e.g. ``agent file /p/agent.py`` or ``agent prompt_hash``."""
    then: str | None
    """Its value in the snapshot (None: it was not there)."""
    now: str | None
    """Its value now (None: it is gone)."""

    def line(self) -> str:
        """``what: then -> now`` with absent values said in words."""
        return f"{self.what}: {self.then or '(none)'} -> {self.now or '(none)'}"

    def to_dict(self) -> dict[str, Any]:
        """JSON."""
        return {"what": self.what, "then": self.then, "now": self.now}


def _differs(what: str, then: Any, now: Any) -> list[SnapshotChange]:
    if then == now:
        return []
    shown = [None if v is None else str(v) for v in (then, now)]
    return [SnapshotChange(what, shown[0], shown[1])]


def run_changes(then: RunSnapshot, now: RunSnapshot) -> list[SnapshotChange]:
    """Seatrial, Python and the agent's spec and module file, run snapshot against run snapshot."""
    changes = _differs("seatrial version", then.seatrial_version, now.seatrial_version)
    changes += _differs("python version", then.python_version, now.python_version)
    changes += _differs("agent", then.agent.spec, now.agent.spec)
    if then.agent.file != now.agent.file:
        changes += _differs("agent file", then.agent.file, now.agent.file)
    elif then.agent.code_hash != now.agent.code_hash:
        what = f"agent file {then.agent.file}"
        changes += _differs(what, then.agent.code_hash, now.agent.code_hash)
    return changes


def attempt_changes(then: AttemptSnapshot, now: AttemptSnapshot) -> list[SnapshotChange]:
    """Fixture, the agent's own description and the models, attempt against replayed attempt."""
    changes = _differs("fixture", then.fixture_hash, now.fixture_hash)
    said_then, said_now = then.agent or {}, now.agent or {}
    for key in dict.fromkeys([*said_then, *said_now]):
        changes += _differs(f"agent {key}", said_then.get(key), said_now.get(key))
    if now.models_answered and then.models_answered != now.models_answered:
        changes += _differs(
            "models answering",
            ", ".join(then.models_answered) or None,
            ", ".join(now.models_answered),
        )
    return changes


def gateway_changes(then: RunSnapshot, config: GatewayConfig) -> list[SnapshotChange]:
    """The project's gateway configuration now against the one the run used."""
    if then.gateway is None:
        return []
    changes = _differs(
        "gateway configuration", then.gateway.config_hash, gateway_config_hash(config)
    )
    now = {name: model.model for name, model in config.models.items()}
    for name in dict.fromkeys([*then.gateway.models, *now]):
        changes += _differs(f"model {name}", then.gateway.models.get(name), now.get(name))
    return changes


def suite_changes(suite_path: str, case: Case) -> tuple[list[SnapshotChange], list[str]]:
    """The stored case against the suite file now: changes, and notes when it cannot tell."""
    if not suite_path:
        return [], []
    path = Path(suite_path)
    if not path.is_file():
        return [], [f"the suite file {path} is gone; the case is replayed as it was stored"]
    try:
        suite = load_suite(path)
    except SeatrialError as exc:
        first = str(exc).splitlines()[0]
        return [], [f"the suite file {path} no longer loads ({first}); the stored case is used"]
    now = next((c for c in suite.cases if c.id == case.id), None)
    if now is None:
        return [SnapshotChange(f"case {case.id} in {path}", case_hash(case), None)], []
    return _differs(f"case {case.id} in {path}", case_hash(case), case_hash(now)), []
