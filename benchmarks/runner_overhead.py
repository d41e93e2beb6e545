"""Runner overhead: 10,000 attempts against an agent that sleeps 50 ms, concurrency 500, SQLite.

The floor is 10,000 x 0.05 s / 500 = 1 s: the time the agent alone needs. Everything above it is
Seatrial's own cost (scheduling, recording spans, evaluating L1 and L2 assertions, storing).
Goal: under 2x the floor. Usage: python benchmarks/runner_overhead.py [--attempts N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from overhead_agent import LATENCY_S  # noqa: E402

from seatrial.agent import resolve_agent  # noqa: E402
from seatrial.case import Case, Suite  # noqa: E402
from seatrial.run import RunOptions, run_suite_async  # noqa: E402
from seatrial.store import Store  # noqa: E402

ASSERTIONS = [
    {"type": "tool_called", "expected": "lookup_order"},
    {"type": "tool_params", "tool": "lookup_order", "expected": {"order_id": "A1001"}},
    {"type": "no_loop"},
    {"type": "contains", "value": "shipped"},
    {"type": "regex", "value": r"Order \w+ is"},
    {"type": "business_rule", "rule": "no_pii_leak"},
]


def build_suite(cases: int, repeats: int) -> Suite:
    """``cases`` cases with L1 and L2 assertions and limits, each repeated ``repeats`` times."""
    return Suite(
        name="runner-overhead",
        cases=[
            Case.model_validate(
                {
                    "id": f"order-{i:04d}",
                    "category": f"cat-{i % 10}",
                    "input": "Where is my order A1001?",
                    "repeats": repeats,
                    "limits": {"tool_calls": 3, "model_calls": 3},
                    "forbidden_events": ["write_file"],
                    "assertions": ASSERTIONS,
                }
            )
            for i in range(cases)
        ],
    )


async def measure(attempts: int, concurrency: int, db_dir: Path, workers: int = 1) -> float:
    """Wall time of one run, from the first attempt to the last stored one."""
    suite = build_suite(cases=attempts // 100, repeats=100)
    adapter = resolve_agent("python:overhead_agent:agent", base_dir=Path(__file__).parent)
    with Store.open(f"sqlite:///{db_dir / 'bench.db'}") as store:
        await adapter.check()
        started = time.perf_counter()
        outcome = await run_suite_async(
            suite,
            adapter,
            store,
            RunOptions(concurrency=concurrency, timeout_s=60, workers=workers),
        )
        elapsed = time.perf_counter() - started
        stored = len(store.finished_attempts(outcome.run_id))
        await adapter.aclose()
    assert stored == attempts, f"stored {stored} of {attempts} attempts"
    return elapsed


def main() -> None:
    """Run the benchmark and print the figure and its ratio to the floor."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--workers", type=int, default=1, help="processes (one per core)")
    args = parser.parse_args()
    floor = args.attempts * LATENCY_S / args.concurrency
    with tempfile.TemporaryDirectory() as tmp:
        elapsed = asyncio.run(measure(args.attempts, args.concurrency, Path(tmp), args.workers))
    latency_ms = LATENCY_S * 1000
    print(
        f"attempts={args.attempts} concurrency={args.concurrency} workers={args.workers} "
        f"latency={latency_ms:.0f} ms"
    )
    print(
        f"wall time {elapsed:.2f} s; floor {floor:.2f} s; ratio {elapsed / floor:.2f}x (goal < 2x)"
    )


if __name__ == "__main__":
    main()
