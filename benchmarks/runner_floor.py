"""The floor under the runner's CPU per attempt: what the project's contracts make every attempt
cost, whatever the runner's own code does.

Each part is run alone, ``--attempts`` times, so a profiler (``valgrind --tool=callgrind``)
can count its instructions; run it at two sizes and divide the difference by the difference
in attempts, so start-up and imports cancel out (docs/performance.md, issue 22):

- ``records``: one attempt of ``runner_overhead.py`` (its trace with three spans, eight
  assertion results, metrics, snapshot) rebuilt as pydantic records each time, without
  validation (``trusted_model``, as the runner builds them): CONVENTIONS item 3, every
  persisted record is a pydantic model.
- ``encode``: the same, then encoded into its ``attempts`` row and three ``spans`` rows
  (``encode_attempts``): DESIGN.md, spans stored flat.
- ``store``: the same, then stored in SQLite in groups of 64 (``Store.save_encoded``), on this
  thread.
- ``loop``: asyncio's share alone: 500 lanes, each attempt a 50 ms sleep inside
  ``asyncio.timeout``, as the runner schedules attempts at concurrency 500.

    valgrind --tool=callgrind .venv/bin/python benchmarks/runner_floor.py store 1000
    valgrind --tool=callgrind .venv/bin/python benchmarks/runner_floor.py store 3000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import overhead_agent  # noqa: E402
from runner_overhead import build_suite  # noqa: E402

from seatrial.agent import resolve_agent  # noqa: E402
from seatrial.record import AttemptRecord, RunInfo  # noqa: E402
from seatrial.run._attempt import run_attempt  # noqa: E402
from seatrial.run._plan import CasePlan  # noqa: E402
from seatrial.store import EncodedAttempts, Store, encode_attempts  # noqa: E402
from seatrial.trace import Span, Trace  # noqa: E402
from seatrial.trace._trusted import trusted_model  # noqa: E402

GROUP = 64
"""Attempts per write, as the runner's writer groups them at most."""


def _copy(model: Any) -> Any:
    return trusted_model(type(model), dict(model.__dict__))


def rebuilt(record: AttemptRecord, attempt: int) -> AttemptRecord:
    """A new record holding the same values as ``record`` (its trace and results new too)."""
    assert record.trace is not None
    spans = [
        trusted_model(
            Span,
            {
                **span.__dict__,
                "attributes": dict(span.attributes),
                "events": [_copy(event) for event in span.events],
            },
        )
        for span in record.trace.spans
    ]
    fields = {
        **record.__dict__,
        "attempt": attempt,
        "trace": trusted_model(Trace, {**record.trace.__dict__, "spans": spans}),
        "assertions": [_copy(result) for result in record.assertions],
        "metrics": _copy(record.metrics),
        "snapshot": None if record.snapshot is None else _copy(record.snapshot),
        "responses": list(record.responses),
    }
    return trusted_model(AttemptRecord, fields)


async def one_attempt() -> AttemptRecord:
    """One attempt of the runner benchmark's suite, run by the runner (agent without sleep)."""
    overhead_agent.LATENCY_S = 0
    suite = build_suite(cases=1, repeats=1)
    adapter = resolve_agent("python:overhead_agent:agent", base_dir=HERE)
    await adapter.check()
    record = await run_attempt(adapter, CasePlan.of(suite.cases[0]), 0, "floor", 60)
    await adapter.aclose()
    assert record.verdict == "PASS", record.reason
    return record


async def records(part: str, attempts: int) -> None:
    """Rebuild (and encode, and store) ``attempts`` copies of one attempt."""
    record = await one_attempt()
    with tempfile.TemporaryDirectory() as tmp, Store.open(f"sqlite:///{tmp}/floor.db") as store:
        info = RunInfo.model_validate(
            {"run_id": "floor", "suite": "floor", "agent": "overhead", "started_at": time.time()}
        )
        store.create_run(info, build_suite(cases=1, repeats=1).cases)
        group: list[EncodedAttempts] = []
        for attempt in range(attempts):
            copy = rebuilt(record, attempt)
            if part == "records":
                continue
            encoded = encode_attempts([copy])
            if part == "encode":
                continue
            group.append(encoded)
            if len(group) == GROUP:
                store.save_encoded(group)
                group = []
        if group:
            store.save_encoded(group)


async def loop(attempts: int) -> None:
    """500 lanes share ``attempts`` sleeps of 50 ms, each inside ``asyncio.timeout``."""
    jobs = iter(range(attempts))

    async def lane() -> None:
        for _ in jobs:
            async with asyncio.timeout(60):
                await asyncio.sleep(0.05)

    await asyncio.gather(*(lane() for _ in range(500)))


def main() -> None:
    """Run one part ``--attempts`` times."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("part", choices=["records", "encode", "store", "loop"])
    parser.add_argument("attempts", type=int)
    args = parser.parse_args()
    if args.part == "loop":
        asyncio.run(loop(args.attempts))
    else:
        asyncio.run(records(args.part, args.attempts))


if __name__ == "__main__":
    main()
