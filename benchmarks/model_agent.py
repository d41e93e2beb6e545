"""A ``model:`` agent's cost per attempt: one model call each, answered in process.

The model is a ``seatrial.testing.ScriptedModel`` (``provider: scripted``): no upstream socket,
no SDK, so what is measured is Seatrial's own work around the call, through
``execute_suite_async`` as ``seatrial run`` does it: the agent's loop, the gateway's pipeline
(span, ledger row, pricing), and, before issue 22, the JSON round trips through the proxy on
127.0.0.1 that the agent used to call (now ``Gateway.chat`` bound to the attempt).

``--before REF`` measures the code at git ``REF`` and today's working tree alternately, each
run in a fresh process with this benchmark's code, ``--rounds`` times, and prints medians and
the ratio today / before (the old tree is exported with ``git archive`` into a scratch folder,
as in runner_overhead.py). ``--workers 2`` forks workers today; the code before kept a model
agent's run in one process.

    python benchmarks/model_agent.py [--attempts N] [--concurrency C] [--workers N]
    python benchmarks/model_agent.py --before f94717f --rounds 3
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

from seatrial.testing import ScriptedModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODEL = ScriptedModel("Booked.")
"""The model every attempt calls once (named by ``base_url: python:FILE:MODEL``)."""


@dataclass
class Figures:
    """One run's figures."""

    attempts: int
    wall_s: float
    cpu_s: float

    @property
    def cpu_per_attempt_ms(self) -> float:
        """CPU (user + system, this process and its workers) per attempt, in ms."""
        return self.cpu_s / self.attempts * 1000


def _project(root: Path, attempts: int) -> Path:
    (root / "seatrial.yaml").write_text(
        "models:\n"
        "  main:\n"
        "    provider: scripted\n"
        "    model: scripted-v1\n"
        f"    base_url: python:{Path(__file__).resolve()}:MODEL\n"
        "    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n"
        "agents:\n"
        "  booker:\n"
        "    spec: model:main\n"
        "    system_prompt: You book visits.\n",
        encoding="utf-8",
    )
    check = "[{type: contains, value: Booked}]"
    cases = "".join(
        f"  - {{id: c{n}, input: Book order {n}, assertions: {check}}}\n" for n in range(attempts)
    )
    suite = root / "suite.yaml"
    suite.write_text("suite: bench\ncases:\n" + cases, encoding="utf-8")
    return suite


def _cpu_s(workers: int) -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    if workers > 1:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu += children.ru_utime + children.ru_stime
    return cpu


async def measure(attempts: int, concurrency: int, workers: int) -> Figures:
    """One run in this process; every attempt must pass."""
    from seatrial._execute import execute_suite_async
    from seatrial.config import load_config
    from seatrial.run import RunOptions

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        suite = _project(root, attempts)
        config = load_config(root)
        cpu_before, started = _cpu_s(workers), time.perf_counter()
        done = await execute_suite_async(
            suite,
            "booker",
            config=config,
            db=f"sqlite:///{root / 'bench.db'}",
            write_report_files=False,
            options=RunOptions(concurrency=concurrency, timeout_s=60, workers=workers),
        )
        elapsed, cpu = time.perf_counter() - started, _cpu_s(workers) - cpu_before
    passed = sum(case.verdict == "PASS" for case in done.report.cases)
    assert passed == attempts, f"{passed} of {attempts} attempts passed"
    return Figures(attempts, elapsed, cpu)


def _exported_tree(ref: str) -> Path:
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


def _child(src: Path, args: argparse.Namespace) -> Figures:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        f"--attempts={args.attempts}",
        f"--concurrency={args.concurrency}",
        f"--workers={args.workers}",
    ]
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return Figures(**json.loads(done.stdout.strip().splitlines()[-1]))


def compare(args: argparse.Namespace) -> None:
    """Alternate before / today and print the medians."""
    trees = {"before": _exported_tree(args.before), "today": ROOT / "src"}
    results: dict[str, list[Figures]] = {name: [] for name in trees}
    for round_ in range(1, args.rounds + 1):
        for name, src in trees.items():
            figures = _child(src, args)
            results[name].append(figures)
            print(
                f"round {round_} {name:6s}: wall {figures.wall_s:6.2f} s, "
                f"CPU {figures.cpu_per_attempt_ms:.3f} ms/attempt",
                flush=True,
            )
    print(
        f"\nattempts={args.attempts} concurrency={args.concurrency} workers={args.workers}; "
        f"median of {args.rounds} alternating runs"
    )
    print("| code | wall | CPU per attempt |\n|---|---|---|")
    medians = {}
    for name, runs in results.items():
        wall = statistics.median(f.wall_s for f in runs)
        cpu = statistics.median(f.cpu_per_attempt_ms for f in runs)
        medians[name] = (wall, cpu)
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} ms |")
    (wall_b, cpu_b), (wall_t, cpu_t) = medians["before"], medians["today"]
    print(f"\ntoday / before: CPU per attempt {cpu_t / cpu_b:.2f}x, wall {wall_t / wall_b:.2f}x")


def main() -> None:
    """Run the benchmark, or the before / today comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attempts", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--before", help="git ref to compare with (alternating runs)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.before:
        compare(args)
        return
    figures = asyncio.run(measure(args.attempts, args.concurrency, args.workers))
    if args.child:
        print(json.dumps(asdict(figures)))
        return
    print(
        f"attempts={figures.attempts} workers={args.workers}: wall {figures.wall_s:.2f} s, "
        f"CPU {figures.cpu_per_attempt_ms:.3f} ms/attempt"
    )


if __name__ == "__main__":
    main()
