"""Runner overhead: 10,000 attempts against an agent that sleeps 50 ms, concurrency 500, SQLite.

The floor is 10,000 x 0.05 s / 500 = 1 s: the time the agent alone needs. Everything above it is
Seatrial's own cost (scheduling, recording spans, evaluating L1 and L2 assertions, storing).
Besides the wall time, each run reports the harness's CPU per attempt (user + system time of the
whole process, every thread, from the first attempt to the last one stored) and the process's
peak memory (max RSS).

``--before REF`` measures the code at git ``REF`` (default: the commit before issue 13's work)
and today's working tree alternately, each run in a fresh process with the same benchmark code,
``--rounds`` times, and prints the medians and the ratio today / before: on a shared, noisy
machine only alternating runs compare fairly. The old tree is exported with ``git archive``
into a scratch folder (nothing in this checkout changes).

``--sequential`` measures the event loop's own share alone, with less noise: attempts one at a
time against the same agent without its 50 ms sleep, each evaluated and encoded into its rows
(no database, no concurrency), CPU per attempt as the best of five batches. It combines with
``--before``.

    python benchmarks/runner_overhead.py [--attempts N] [--workers N]
    python benchmarks/runner_overhead.py --before 092ffc6 --rounds 5
    python benchmarks/runner_overhead.py --sequential --before --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from overhead_agent import LATENCY_S  # noqa: E402

from seatrial.agent import resolve_agent  # noqa: E402
from seatrial.case import Case, Suite  # noqa: E402
from seatrial.run import RunOptions, run_suite_async  # noqa: E402
from seatrial.store import Store  # noqa: E402

BEFORE_REF = "092ffc690be13901ebd5d122e93d3a836ab7f33b"
"""The commit issue 13's work started from ("today's code" for before/after figures)."""

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


@dataclass
class Figures:
    """One run's figures."""

    attempts: int
    wall_s: float
    """From the first attempt to the last one stored."""
    cpu_s: float
    """User + system CPU of the process (all threads) over the same span."""
    peak_rss_mb: float
    """Peak resident memory of the process, whole life."""

    @property
    def cpu_per_attempt_ms(self) -> float:
        """CPU per attempt, milliseconds."""
        return self.cpu_s / self.attempts * 1000


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure_run(attempts: int, concurrency: int, db_dir: Path, workers: int = 1) -> Figures:
    """Run the benchmark once in this process; check every attempt was stored."""
    suite = build_suite(cases=max(1, attempts // 100), repeats=min(100, attempts))
    adapter = resolve_agent("python:overhead_agent:agent", base_dir=HERE)
    with Store.open(f"sqlite:///{db_dir / 'bench.db'}") as store:
        await adapter.check()
        cpu_before = _cpu_s()
        started = time.perf_counter()
        outcome = await run_suite_async(
            suite,
            adapter,
            store,
            RunOptions(concurrency=concurrency, timeout_s=60, workers=workers),
        )
        elapsed = time.perf_counter() - started
        cpu = _cpu_s() - cpu_before
        if workers > 1:
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu += children.ru_utime + children.ru_stime
        counts = store.verdict_counts([outcome.run_id]).get(outcome.run_id, {})
        stored = sum(counts.values())
        await adapter.aclose()
    assert stored == attempts, f"stored {stored} of {attempts} attempts"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Figures(attempts, elapsed, cpu, peak)


async def measure_sequential(attempts: int) -> Figures:
    """Attempts one at a time, agent without its sleep, evaluated and encoded, nothing stored.

    What the event loop spends per attempt (recording, evaluating, encoding), without the
    writer thread, the database and the scheduling of 500 attempts in flight: the part of the
    CPU per attempt the runner itself decides, measured with far less noise. CPU per attempt
    is the best of five batches of ``attempts // 5`` (after a warm-up batch).
    """
    import overhead_agent

    from seatrial.run._attempt import run_attempt
    from seatrial.store import encode_attempts

    overhead_agent.LATENCY_S = 0  # the agent reads it at call time: asyncio.sleep(0)
    suite = build_suite(cases=10, repeats=1)
    cases: list[Any] = list(suite.cases)
    try:  # the runner plans each case once per run; so does this loop, where the code can
        from seatrial.run._plan import CasePlan
    except ImportError:  # code before the case plan: it kept its plans in module caches
        pass
    else:
        cases = [CasePlan.of(case) for case in cases]
    adapter = resolve_agent("python:overhead_agent:agent", base_dir=HERE)
    await adapter.check()
    batch = max(1, attempts // 5)
    best = float("inf")
    started = time.perf_counter()
    for round_ in range(6):
        cpu_before = _cpu_s()
        for i in range(batch):
            record = await run_attempt(adapter, cases[i % 10], i, "sequential", 60)
            assert record.verdict == "PASS", record.reason
            encode_attempts([record])
        if round_ > 0:  # the first batch warms caches and imports up
            best = min(best, _cpu_s() - cpu_before)
    elapsed = time.perf_counter() - started
    await adapter.aclose()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Figures(batch, elapsed, best, peak)


async def measure(attempts: int, concurrency: int, db_dir: Path, workers: int = 1) -> float:
    """Wall time of one run, from the first attempt to the last stored one."""
    return (await measure_run(attempts, concurrency, db_dir, workers)).wall_s


def exported_tree(ref: str) -> Path:
    """``src/`` of git ``ref``, exported once into a scratch folder (reused afterwards)."""
    commit = subprocess.run(
        ["git", "rev-parse", ref], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    folder = Path(tempfile.gettempdir()) / f"seatrial-{commit[:12]}"
    if not (folder / "src" / "seatrial" / "__init__.py").exists():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", commit, "src"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"


def run_child(src: Path, args: argparse.Namespace) -> Figures:
    """One measurement in a fresh process importing Seatrial from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        f"--attempts={args.attempts}",
        f"--concurrency={args.concurrency}",
        f"--workers={args.workers}",
        *(["--sequential"] if args.sequential else []),
    ]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return Figures(**json.loads(done.stdout.strip().splitlines()[-1]))


def compare(args: argparse.Namespace) -> None:
    """Alternate before / today ``args.rounds`` times and print medians and ratios."""
    trees = {"before": exported_tree(args.before), "today": ROOT / "src"}
    results: dict[str, list[Figures]] = {name: [] for name in trees}
    for round_ in range(1, args.rounds + 1):
        for name, src in trees.items():
            figures = run_child(src, args)
            results[name].append(figures)
            print(
                f"round {round_} {name:6s}: wall {figures.wall_s:6.2f} s, "
                f"CPU {figures.cpu_per_attempt_ms:.3f} ms/attempt, "
                f"peak {figures.peak_rss_mb:.0f} MB",
                flush=True,
            )
    medians = {
        name: (
            statistics.median(f.wall_s for f in runs),
            statistics.median(f.cpu_per_attempt_ms for f in runs),
            statistics.median(f.peak_rss_mb for f in runs),
        )
        for name, runs in results.items()
    }
    if args.sequential:
        print(f"\nsequential (best of 5 batches); median of {args.rounds} alternating runs")
        print("| code | CPU per attempt |\n|---|---|")
        for name, (_, cpu, _) in medians.items():
            print(f"| {name} | {cpu * 1000:.0f} us |")
        ratio = medians["today"][1] / medians["before"][1]
        print(f"\ntoday / before: CPU per attempt {ratio:.2f}x")
        return
    floor = args.attempts * LATENCY_S / args.concurrency
    print(
        f"\nattempts={args.attempts} concurrency={args.concurrency} workers={args.workers}; "
        f"median of {args.rounds} alternating runs; floor {floor:.2f} s"
    )
    print("| code | wall | ratio to floor | CPU per attempt | peak RSS |")
    print("|---|---|---|---|---|")
    for name, (wall, cpu, peak) in medians.items():
        print(f"| {name} | {wall:.2f} s | {wall / floor:.2f}x | {cpu:.3f} ms | {peak:.0f} MB |")
    (wall_b, cpu_b, _), (wall_t, cpu_t, _) = medians["before"], medians["today"]
    print(
        f"\ntoday / before: CPU per attempt {cpu_t / cpu_b:.2f}x, wall {wall_t / wall_b:.2f}x "
        "(goal: CPU <= 0.5x)"
    )


def main() -> None:
    """Run the benchmark (or the before/today comparison) and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--workers", type=int, default=1, help="processes (one per core)")
    parser.add_argument(
        "--before",
        nargs="?",
        const=BEFORE_REF,
        help="git ref to compare with, alternately (default: the commit before issue 13)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (--before)")
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="attempts one at a time, no sleep, no database: the event loop's CPU per attempt",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.before:
        compare(args)
        return
    if args.sequential:
        figures = asyncio.run(measure_sequential(args.attempts))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            figures = asyncio.run(
                measure_run(args.attempts, args.concurrency, Path(tmp), args.workers)
            )
    if args.child:
        print(json.dumps(asdict(figures)))
        return
    if args.sequential:
        print(
            f"sequential: {figures.cpu_per_attempt_ms * 1000:.0f} us of CPU per attempt "
            f"(best of 5 batches of {figures.attempts}; no sleep, no database)"
        )
        return
    floor = args.attempts * LATENCY_S / args.concurrency
    print(
        f"attempts={args.attempts} concurrency={args.concurrency} workers={args.workers} "
        f"latency={LATENCY_S * 1000:.0f} ms"
    )
    print(
        f"wall time {figures.wall_s:.2f} s; floor {floor:.2f} s; "
        f"ratio {figures.wall_s / floor:.2f}x (goal < 2x); "
        f"CPU {figures.cpu_per_attempt_ms:.3f} ms per attempt; "
        f"peak RSS {figures.peak_rss_mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
