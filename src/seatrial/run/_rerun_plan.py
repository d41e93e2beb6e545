"""How a rerun serves its model answers: the stored run's cassette, or the live models.

Read off the stored run's snapshot: a run that recorded a cassette (or a rerun that
served one) is replayed from that recording in strict mode, with the model names the agent
asks for filled in from the snapshot when seatrial.yaml lost them; ``--live``, a run without
a cassette, or a run from before snapshots calls the project's models; a run without a
gateway just runs the agent again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, RunInfo, RunSnapshot
from seatrial.run._gateway_hook import gateway_for_run
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.config import Config
    from seatrial.gateway import GatewayConfig, GatewayServer

RerunMode = Literal["cassette", "live"]
"""``cassette``: recorded model answers served back; ``live``: the models (or no gateway)."""

_GATEWAY_PREFIX = "seatrial.gateway."


@dataclass
class RerunPlan:
    """How a rerun will run: its mode, gateway configuration and what to tell the reader."""

    mode: RerunMode
    gateway: GatewayConfig | None
    cassette: Path | None = None
    source: tuple[str, int] | None = None
    """The recorded (run, attempt) whose answers the cassette serves."""
    notes: list[str] = field(default_factory=list)


def run_snapshot_of(info: RunInfo) -> RunSnapshot | None:
    """A run's snapshot from its settings; None for a run stored before snapshots."""
    return info.settings.snapshot


def _used_gateway(snapshot: RunSnapshot | None, stored: AttemptRecord) -> bool:
    if snapshot is not None:
        return snapshot.gateway is not None
    calls = stored.trace.model_calls() if stored.trace is not None else []
    return any(k.startswith(_GATEWAY_PREFIX) for c in calls for k in c.span.attributes)


def _recorded_source(
    info: RunInfo, snapshot: RunSnapshot | None, attempt: int
) -> tuple[str, int] | None:
    """The recorded (run, attempt) to serve answers from: the run's own recording, or for a
    rerun in cassette mode the recording it replayed; None when there is none."""
    recording = snapshot.gateway if snapshot is not None else None
    if recording is None:
        return None
    if recording.cassette_mode == "record":
        return info.run_id, attempt
    replayed = info.settings.replay_of
    if recording.cassette_mode == "replay" and replayed is not None:
        if replayed.run_id is not None and replayed.attempt is not None:
            return replayed.run_id, replayed.attempt
    return None


def rerun_plan(
    config: Config, info: RunInfo, snapshot: RunSnapshot | None, stored: AttemptRecord, live: bool
) -> RerunPlan:
    """Cassette replay when the run recorded one and live is not asked; else live."""
    from seatrial.gateway import Cassette, CassetteConfig, ModelConfig

    if not _used_gateway(snapshot, stored):
        return RerunPlan(
            "live", None, notes=[_("the stored run had no gateway: the agent is run again")]
        )
    project = config.gateway_config()
    recording = snapshot.gateway if snapshot is not None else None
    source = _recorded_source(info, snapshot, stored.attempt)
    if live or recording is None or source is None:
        if not project.models:
            raise InputError(
                _(
                    "run {run_id} called its models through the gateway, and seatrial.yaml in "
                    "{folder} has no `models:` to call them live; add them (see docs/gateway.md)"
                ).format(run_id=info.run_id, folder=config.project_dir)
            )
        notes = [] if live else [_("the stored run recorded no cassette: the models answer live")]
        off = project.model_copy(update={"cassette": CassetteConfig(mode="off")})
        return RerunPlan("live", off, notes=notes)
    folder = recording.cassette_path or str(config.project_dir / ".seatrial" / "cassettes")
    cassette = CassetteConfig(mode="replay", match="strict", path=folder)
    path = Cassette(cassette, config.project_dir).path_for(source[0])
    if not path.is_file():
        raise InputError(
            _(
                "the cassette of run {run_id} is gone ({path}); rerun it with --live, or record "
                "the run again (gateway.cassette.mode: record)"
            ).format(run_id=source[0], path=path)
        )
    # Recorded answers need no upstream, only the model names the agent asks for.
    models = dict(project.models)
    for name, model_id in recording.models.items():
        models.setdefault(name, ModelConfig(name=name, model=model_id))
    replaying = project.model_copy(update={"cassette": cassette, "models": models})
    return RerunPlan("cassette", replaying, cassette=path, source=source)


@asynccontextmanager
async def rerun_gateway(
    plan: RerunPlan, store: Store, config: Config, run_id: str, case_id: str
) -> AsyncIterator[GatewayServer | None]:
    """The plan's gateway for the block (None without one); in cassette mode, attempt 1 of
    ``case_id`` in the new run ``run_id`` is served the recorded attempt's answers."""
    if plan.gateway is None:
        yield None
        return
    async with gateway_for_run(plan.gateway, store=store, project_dir=config.project_dir) as server:
        cassette = server.gateway.cassette
        if cassette is not None and plan.source is not None:
            source_run, source_attempt = plan.source
            cassette.for_attempt(
                run_id, case_id, 1, source_run_id=source_run, source_attempt=source_attempt
            )
        yield server
