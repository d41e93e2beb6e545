"""What a new run records when it starts: its :class:`~seatrial.record.RunSettings`, composed
in one place.

The front door (``seatrial._execute``) calls :func:`new_run_settings` with everything it set
up (the gateway, the judge, the gates, the baseline, the golden set) and hands the record to
the runner; a library caller that runs a suite past the front door (the demo, ``seatrial
rerun``, benchmarks) gets the same record from the runner, built by the same function.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from seatrial.agent import AgentAdapter
from seatrial.case import Case, Suite
from seatrial.record import RunSettings
from seatrial.run._snapshot import run_snapshot

if TYPE_CHECKING:
    from seatrial.gateway import RunGateway
    from seatrial.run._runner import RunOptions


def suite_hash(cases: list[Case]) -> str:
    """sha256 of the cases as run, so a report can tell whether the suite changed."""
    text = json.dumps([c.model_dump(mode="json") for c in cases], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def new_run_settings(
    suite: Suite,
    adapter: AgentAdapter,
    options: RunOptions,
    gateway: RunGateway | None = None,
    recorded: Mapping[str, Any] | None = None,
) -> RunSettings:
    """The settings a new run of ``suite`` stores: ``options``' values, the suite's gate,
    rubrics and hash, the snapshot of ``adapter`` and ``gateway``, then ``options.settings``
    and ``recorded`` (by :class:`RunSettings` field name; what the front door chose) and the
    judge's record, each later one winning.

    Raises:
        pydantic.ValidationError: a value given by field name has the wrong type.
    """
    return RunSettings.model_validate(
        {
            "repeats": options.repeats,
            "concurrency": options.concurrency,
            "timeout_s": options.timeout_s,
            "workers": options.workers,
            "gate": suite.gate.model_dump(),
            "rubrics": suite.rubrics,
            "suite_hash": suite_hash(suite.cases),
            "probe": suite.probe,
            "snapshot": run_snapshot(adapter, gateway),
            **options.settings,
            **(recorded or {}),
            **({"judge": options.judge.record()} if options.judge is not None else {}),
        }
    )
