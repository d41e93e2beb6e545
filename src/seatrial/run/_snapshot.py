"""Snapshots: what a run and each of its attempts ran with, for ``seatrial rerun``.

A run's snapshot (Seatrial and Python versions, the agent's spec and module hash, the
gateway's configuration hash and cassette) is stored in its settings when it starts. An
attempt's snapshot (case and fixture hashes, the models asked and answering, the agent's own
metadata, its cassette entry) is stored with the attempt. The case and fixture hashes are
computed once per case per run, in its ``CasePlan`` (run/_plan.py): hashing a fixture folder
per attempt would cost more than the rest of the attempt's bookkeeping.
"""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seatrial._version import __version__
from seatrial.agent import AgentAdapter, HttpAgent, PythonAgent, RecordedAgent, content_hash
from seatrial.case import Case
from seatrial.record import (
    AttemptSnapshot,
    CassetteKey,
    RunSnapshot,
    RunSnapshotAgent,
    RunSnapshotGateway,
)
from seatrial.trace import Trace, trusted_model
from seatrial.trace import attrs as A

if TYPE_CHECKING:
    from seatrial.gateway import GatewayConfig, RunGateway

CASSETTE_ATTRIBUTE = "seatrial.gateway.cassette"
"""The chat-span attribute the gateway sets to ``record`` or ``replay`` (gateway/_spans.py)."""


def case_hash(case: Case) -> str:
    """sha256 (first 16 hex digits) of the case definition, as stored with the run."""
    return content_hash(case.model_dump(mode="json"))


def fixture_hash(fixture: str | Path | None) -> str | None:
    """sha256 (first 16 hex digits) of a fixture folder: every file's relative path and bytes.

    Symbolic links count by their target, not by what they point to. None without a fixture;
    ``missing`` when the folder is not there.
    """
    if not fixture:
        return None
    root = Path(fixture)
    if not root.is_dir():
        return "missing"
    digest: list[Any] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                digest.append([relative, "link", os.readlink(path)])
            else:
                digest.append([relative, hashlib.sha256(path.read_bytes()).hexdigest()])
    return content_hash(digest)


def file_hash(path: Path | None) -> str | None:
    """sha256 (first 16 hex digits) of a file's bytes; None when there is no such file."""
    if path is None or not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def gateway_config_hash(config: GatewayConfig) -> str:
    """sha256 (first 16 hex digits) of a gateway configuration, its cassette section left out
    (a replay switches the cassette to ``replay``; that is not a change of the models)."""
    return content_hash(config.model_dump(mode="json", exclude={"cassette"}))


def agent_source(adapter: AgentAdapter) -> RunSnapshotAgent:
    """The agent as far as Seatrial can see it: its spec, kind and module file with its hash."""
    if isinstance(adapter, PythonAgent):
        try:
            file = adapter.source_file()
        except Exception:  # an agent that no longer imports: the replay says so elsewhere
            file = None
        return RunSnapshotAgent(
            spec=adapter.spec,
            kind="python",
            file=str(file) if file is not None else None,
            code_hash=file_hash(file),
        )
    kind = (
        "http"
        if isinstance(adapter, HttpAgent)
        else "replay"
        if isinstance(adapter, RecordedAgent)
        else type(adapter).__name__
    )
    return RunSnapshotAgent(spec=adapter.spec, kind=kind)


def gateway_snapshot(gateway: RunGateway | None) -> RunSnapshotGateway | None:
    """The gateway's models, configuration hash and cassette; None without a gateway."""
    if gateway is None:
        return None
    config = gateway.gateway.config
    cassette = gateway.gateway.cassette
    return RunSnapshotGateway(
        config_hash=gateway_config_hash(config),
        models={name: model.model for name, model in config.models.items()},
        cassette_mode=config.cassette.mode,
        cassette_path=str(cassette.folder.resolve()) if cassette is not None else None,
    )


def run_snapshot(adapter: AgentAdapter, gateway: RunGateway | None = None) -> RunSnapshot:
    """The run-level snapshot, taken when the run starts, with the run's gateway."""
    return RunSnapshot(
        seatrial_version=__version__,
        python_version=platform.python_version(),
        agent=agent_source(adapter),
        gateway=gateway_snapshot(gateway),
    )


def attempt_snapshot(
    run_id: str,
    case: Case,
    attempt: int,
    trace: Trace,
    agent_metadata: dict[str, Any] | None,
    case_hash: str,
    fixture_hash: str | None,
) -> AttemptSnapshot:
    """The attempt-level snapshot, read off its finished trace."""
    requested: set[str] = set()
    answered: set[str] = set()
    recorded = 0
    for call in trace.model_calls():
        attributes = call.span.attributes
        asked = attributes.get(A.REQUEST_MODEL)
        if asked:
            requested.add(str(asked))
        got = attributes.get(A.RESPONSE_MODEL)
        if got:
            answered.add(str(got))
        if attributes.get(CASSETTE_ATTRIBUTE) == "record":
            recorded += 1
    fields: dict[str, Any] = {
        "case_hash": case_hash,
        "fixture_hash": fixture_hash,
        "models_requested": sorted(requested),
        "models_answered": sorted(answered),
        "agent": agent_metadata,
        "cassette": (
            CassetteKey(run_id=run_id, case_id=case.id, attempt=attempt, calls=recorded)
            if recorded
            else None
        ),
    }
    if agent_metadata is None:
        # Made here from strings and hashes: no need to validate it for every attempt.
        return trusted_model(AttemptSnapshot, fields)
    return AttemptSnapshot.model_validate(fields)
