"""Seatrial side by side with promptfoo, Inspect AI and DeepEval on the same cases and agent.

The same 1,000 single-turn cases, each graded by a ``contains`` and a ``regex`` check, are run
against the same local HTTP agent (``benchmarks/peers/agent.py``: raw asyncio in a process of
its own, answering after 50 ms) by each tool in turn, at each concurrency, for several rounds
that alternate the tools so a noisy machine spreads its noise over all of them:

- Seatrial: ``seatrial run suite.yaml --agent URL --concurrency N`` (the real CLI, a fresh
  SQLite store per run, reports written);
- promptfoo 0.121.x (the last release for Node 20): an HTTP provider against the agent,
  ``-j N``, its cache off, results written to its own store as it does by default;
- Inspect AI: ``inspect eval --model none --max-samples N`` with a solver that POSTs to the
  agent (``benchmarks/peers/inspect_task.py``), two scorers;
- DeepEval: the agent called concurrently, then ``deepeval.evaluate`` in async mode with two
  custom metrics (``benchmarks/peers/deepeval_run.py``), with its result cache writes off
  and, in a separate row, on (its default; their cost grows with the square of the cases, so
  that setting runs once per concurrency under ``--cache-on-limit`` seconds).

Each run is a fresh process tree started from a small wrapper process, which reports the
wall time, the CPU time of the tree (``RUSAGE_CHILDREN``: user + system of every process the
tool started and waited for) and the peak memory (the largest ``ru_maxrss`` of those
processes). Each run's results are checked: a tool that did not pass all 1,000 cases fails
the benchmark. The table shows medians (and ranges) and the ratio of each peer to Seatrial.

The peers are installed into a scratch folder (``--scratch``, default
``/tmp/seatrial-peers``) the first time: ``npm install promptfoo@0.121`` and one virtualenv
each for ``inspect-ai`` and ``deepeval`` (PyPI and the npm registry must be reachable).

    .venv/bin/python benchmarks/peers.py [--cases 1000] [--concurrency 8 64] [--rounds 3]
        [--tools seatrial promptfoo inspect deepeval] [--out peers.md]

Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TOOLS_DIR = HERE / "peers"
REPO = HERE.parent
PROMPTFOO_VERSION = "0.121"
PATTERN = r"Order A\d+ is (shipped|delivered)"
CONTAINS = "shipped"


def message(number: int) -> str:
    """The user message of case ``number``; the agent echoes its digits."""
    return f"Where is order {number:05d}?"


def case_id(number: int) -> str:
    """The id of case ``number``."""
    return f"order-{number:05d}"


# --- installing the peers -------------------------------------------------------------------


def install(scratch: Path, tools: list[str]) -> dict[str, str]:
    """Install the peers named in ``tools`` into ``scratch`` (once); their versions."""
    scratch.mkdir(parents=True, exist_ok=True)
    versions: dict[str, str] = {}
    if "promptfoo" in tools:
        folder = scratch / "promptfoo"
        binary = folder / "node_modules" / ".bin" / "promptfoo"
        if not binary.exists():
            folder.mkdir(exist_ok=True)
            if not (folder / "package.json").exists():
                subprocess.run(["npm", "init", "-y"], cwd=folder, check=True, capture_output=True)
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", f"promptfoo@{PROMPTFOO_VERSION}"],
                cwd=folder,
                check=True,
            )
        package = json.loads((folder / "node_modules/promptfoo/package.json").read_text())
        node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
        versions["promptfoo"] = f"{package['version']} (Node {node.stdout.strip()})"
    for tool, distribution in (("inspect", "inspect-ai"), ("deepeval", "deepeval")):
        if tool not in tools:
            continue
        venv = scratch / f"{tool}-venv"
        python = venv / "bin" / "python"
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        version = f"import importlib.metadata as m; print(m.version({distribution!r}))"
        probe = subprocess.run([str(python), "-c", version], capture_output=True, text=True)
        if probe.returncode != 0:
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", distribution, "httpx"], check=True
            )
            probe = subprocess.run(
                [str(python), "-c", version], capture_output=True, text=True, check=True
            )
        versions[tool] = probe.stdout.strip()
    seatrial = subprocess.run(
        [seatrial_binary(), "--version"], capture_output=True, text=True, check=False
    )
    versions["seatrial"] = (seatrial.stdout.strip() or "0.1.0") + f" ({git_commit()})"
    return versions


def seatrial_binary() -> str:
    """The ``seatrial`` script beside this interpreter (the repository's virtualenv)."""
    return str(Path(sys.executable).parent / "seatrial")


def git_commit() -> str:
    """The repository's commit, with ``+changes`` when the working tree differs from it."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True).stdout
    return head + ("+changes" if dirty else "")


# --- the agent ------------------------------------------------------------------------------


@contextmanager
def agent_server(latency_s: float) -> Iterator[str]:
    """The agent in a process of its own; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen(
        [sys.executable, str(TOOLS_DIR / "agent.py"), str(port), str(latency_s)]
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or child.poll() is not None:
                    raise RuntimeError("the benchmark agent did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/chat"
    finally:
        child.terminate()
        child.wait(timeout=10)


# --- the tools ------------------------------------------------------------------------------


@dataclass
class Command:
    """How to run one tool once, and how to tell that every case passed."""

    argv: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    passed: Callable[[], int] = lambda: 0
    limit_s: float | None = None


def seatrial_command(url: str, cases: int, concurrency: int, work: Path, scratch: Path) -> Command:
    """``seatrial run`` on a fresh SQLite store."""
    import yaml

    suite = work / "suite.yaml"
    if not suite.exists():
        document = {
            "suite": "peers",
            "cases": [
                {
                    "id": case_id(n),
                    "input": message(n),
                    "assertions": [
                        {"type": "contains", "value": CONTAINS},
                        {"type": "regex", "value": PATTERN},
                    ],
                }
                for n in range(cases)
            ],
        }
        suite.write_text(yaml.safe_dump(document, sort_keys=False))
    run = Path(tempfile.mkdtemp(prefix="seatrial-", dir=work))
    argv = [
        seatrial_binary(),
        "run",
        str(suite),
        "--agent",
        url,
        "--concurrency",
        str(concurrency),
        "--db",
        f"sqlite:///{run / 'seatrial.db'}",
        "--report-dir",
        str(run / "reports"),
    ]

    def passed() -> int:
        report = json.loads((run / "reports" / "report.json").read_text())
        return int(report["summary"]["passed"])

    return Command(argv, cwd=run, passed=passed)


def promptfoo_command(url: str, cases: int, concurrency: int, work: Path, scratch: Path) -> Command:
    """``promptfoo eval`` with an HTTP provider against the agent, its cache off."""
    config = work / "promptfooconfig.yaml"
    if not config.exists():
        document = {
            "description": "peers",
            "prompts": ["{{message}}"],
            "providers": [
                {
                    "id": "http",
                    "config": {
                        "url": url,
                        "method": "POST",
                        "headers": {"Content-Type": "application/json"},
                        "body": {
                            "session_id": "{{id}}",
                            "message": "{{prompt}}",
                            "metadata": {"case_id": "{{id}}"},
                        },
                        "transformResponse": "json.response",
                    },
                }
            ],
            "tests": [
                {
                    "vars": {"message": message(n), "id": case_id(n)},
                    "assert": [
                        {"type": "contains", "value": CONTAINS},
                        {"type": "regex", "value": PATTERN},
                    ],
                }
                for n in range(cases)
            ],
        }
        config.write_text(json.dumps(document))  # JSON is YAML
    run = Path(tempfile.mkdtemp(prefix="promptfoo-", dir=work))
    output = run / "results.json"
    argv = [
        str(scratch / "promptfoo" / "node_modules" / ".bin" / "promptfoo"),
        "eval",
        "-c",
        str(config),
        "-j",
        str(concurrency),
        "--no-cache",
        "--no-progress-bar",
        "--no-table",
        "-o",
        str(output),
    ]
    env = {
        "PROMPTFOO_CONFIG_DIR": str(run / "home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }

    def passed() -> int:
        results = json.loads(output.read_text())
        return int(results["results"]["stats"]["successes"])

    return Command(argv, cwd=run, env=env, passed=passed)


def inspect_command(url: str, cases: int, concurrency: int, work: Path, scratch: Path) -> Command:
    """``inspect eval --model none`` with the HTTP-calling solver."""
    venv = scratch / "inspect-venv" / "bin"
    run = Path(tempfile.mkdtemp(prefix="inspect-", dir=work))
    shutil.copy(TOOLS_DIR / "inspect_task.py", run)  # inspect eval takes a relative path
    argv = [
        str(venv / "inspect"),
        "eval",
        "inspect_task.py",
        "--model",
        "none",
        "--max-samples",
        str(concurrency),
        "--log-dir",
        str(run / "logs"),
        "--display",
        "none",
    ]
    env = {"PEERS_AGENT_URL": url, "PEERS_CASES": str(cases)}
    reader = (
        "import sys, glob\n"
        "from inspect_ai.log import read_eval_log\n"
        "log = read_eval_log(glob.glob(sys.argv[1] + '/*.eval')[0])\n"
        "accuracy = min(s.metrics['accuracy'].value for s in log.results.scores)\n"
        "print(round(accuracy * log.results.completed_samples) if log.status == 'success' else 0)\n"
    )

    def passed() -> int:
        out = subprocess.run(
            [str(venv / "python"), "-c", reader, str(run / "logs")],
            capture_output=True,
            text=True,
            check=True,
        )
        return int(out.stdout.strip())

    return Command(argv, cwd=run, env=env, passed=passed)


def deepeval_factory(write_cache: bool, limit_s: float | None) -> Callable[..., Command]:
    """The DeepEval command, its result cache writes on or off."""

    def deepeval_command(
        url: str, cases: int, concurrency: int, work: Path, scratch: Path
    ) -> Command:
        run = Path(tempfile.mkdtemp(prefix="deepeval-", dir=work))
        argv = [
            str(scratch / "deepeval-venv" / "bin" / "python"),
            str(TOOLS_DIR / "deepeval_run.py"),
            url,
            str(cases),
            str(concurrency),
        ] + (["--write-cache"] if write_cache else [])
        env = {
            "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
            "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
            "DEEPEVAL_RESULTS_FOLDER": "",
            "HOME": str(run),
        }
        result = run / "stdout.txt"

        def passed() -> int:
            for line in result.read_text().splitlines():
                if line.startswith("deepeval:"):
                    return int(line.split()[1])
            return 0

        return Command(argv, cwd=run, env=env, passed=passed, limit_s=limit_s)

    return deepeval_command


# --- measuring ------------------------------------------------------------------------------


def measure_child(spec: dict[str, Any]) -> None:
    """In a fresh wrapper process: run one command, print its wall, CPU and peak memory."""
    env = {**os.environ, **spec["env"]}
    # Every tool runs as its users run it: with Python's bytecode cache written and read.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with open(Path(spec["cwd"]) / "stdout.txt", "w") as out:
        started = time.perf_counter()
        try:
            code = subprocess.run(
                spec["argv"],
                cwd=spec["cwd"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=spec["limit_s"],
            ).returncode
        except subprocess.TimeoutExpired:
            code = -1
        wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "peak_mb": usage.ru_maxrss / 1024,
                "returncode": code,
                "timed_out": code == -1,
            }
        )
    )


def measure(command: Command) -> dict[str, Any]:
    """Run ``command`` under a wrapper process; its figures and how many cases passed."""
    spec = {
        "argv": command.argv,
        "cwd": str(command.cwd),
        "env": command.env,
        "limit_s": command.limit_s,
    }
    out = subprocess.run(
        [sys.executable, __file__, "--measure-child", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if figures["timed_out"]:
        figures["passed"] = None
        return figures
    try:
        figures["passed"] = command.passed()
    except (OSError, ValueError, KeyError, subprocess.CalledProcessError):
        figures["passed"] = 0
    return figures


def checked(tool: str, command: Command, cases: int, concurrency: int) -> dict[str, Any]:
    """:func:`measure`, stopping the benchmark when the tool did not pass every case."""
    figures = measure(command)
    if not figures["timed_out"] and figures["passed"] != cases:
        output = (command.cwd / "stdout.txt").read_text()[-3000:]
        raise SystemExit(
            f"{tool} at concurrency {concurrency} passed {figures['passed']} of {cases} cases "
            f"(exit {figures['returncode']}):\n{output}"
        )
    return figures


TOOLS: dict[str, Callable[..., Command]] = {
    "seatrial": seatrial_command,
    "promptfoo": promptfoo_command,
    "inspect": inspect_command,
    "deepeval": deepeval_factory(write_cache=False, limit_s=None),
}
LABELS = {
    "seatrial": "Seatrial",
    "promptfoo": "promptfoo",
    "inspect": "Inspect AI",
    "deepeval": "DeepEval (cache writes off)",
    "deepeval-cache": "DeepEval (cache writes on, its default)",
}


def median_range(values: list[float]) -> str:
    """``median (min-max)`` with one decimal."""
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def table(results: dict[tuple[str, int], list[dict[str, Any]]], cases: int) -> str:
    """The Markdown table: medians per tool and concurrency, ratio of each to Seatrial."""
    lines = [
        "| tool | concurrency | wall s | CPU s | peak MB | wall / Seatrial | CPU / Seatrial |",
        "|---|---|---|---|---|---|---|",
    ]
    concurrencies = sorted({c for _, c in results})
    for concurrency in concurrencies:
        ours = results.get(("seatrial", concurrency), [])
        our_wall = statistics.median(r["wall_s"] for r in ours) if ours else None
        our_cpu = statistics.median(r["cpu_s"] for r in ours) if ours else None
        for tool in LABELS:
            runs = results.get((tool, concurrency))
            if not runs:
                continue
            if any(r["timed_out"] for r in runs):
                limit = max(r["wall_s"] for r in runs)
                lines.append(
                    f"| {LABELS[tool]} | {concurrency} | over {limit:.0f} (stopped) | "
                    f"{median_range([r['cpu_s'] for r in runs])} (until stopped) | "
                    f"{median_range([r['peak_mb'] for r in runs])} | over {limit / our_wall:.1f}x "
                    f"| - |"
                    if our_wall
                    else f"| {LABELS[tool]} | {concurrency} | over {limit:.0f} (stopped) | | | | |"
                )
                continue
            wall = statistics.median(r["wall_s"] for r in runs)
            cpu = statistics.median(r["cpu_s"] for r in runs)
            ratio_wall = f"{wall / our_wall:.2f}x" if our_wall else "-"
            ratio_cpu = f"{cpu / our_cpu:.2f}x" if our_cpu else "-"
            lines.append(
                f"| {LABELS[tool]} | {concurrency} | {median_range([r['wall_s'] for r in runs])} | "
                f"{median_range([r['cpu_s'] for r in runs])} | "
                f"{median_range([r['peak_mb'] for r in runs])} | {ratio_wall} | {ratio_cpu} |"
            )
    lines.append("")
    for concurrency in concurrencies:
        ours = results.get(("seatrial", concurrency), [])
        peers = [
            (statistics.median(r["wall_s"] for r in runs), tool, runs)
            for (tool, c), runs in results.items()
            if c == concurrency and tool != "seatrial" and not any(r["timed_out"] for r in runs)
        ]
        if not ours or not peers:
            continue
        best_wall, best, runs = min(peers)
        best_cpu = statistics.median(r["cpu_s"] for r in runs)
        lines.append(
            f"At concurrency {concurrency} the best peer is {LABELS[best]}: Seatrial takes "
            f"{statistics.median(r['wall_s'] for r in ours) / best_wall:.2f}x its wall time and "
            f"{statistics.median(r['cpu_s'] for r in ours) / best_cpu:.2f}x its CPU time."
        )
    lines.append("")
    lines.append(
        f"{cases} cases; medians of the runs with the range in brackets; CPU is user + system "
        "of the tool's whole process tree; peak MB is the largest resident set of one process."
    )
    return "\n".join(lines)


def main() -> None:
    """Install the peers, start the agent, run every tool in alternating rounds, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--tools", nargs="+", default=list(TOOLS), choices=[*TOOLS, "deepeval-cache"]
    )
    parser.add_argument(
        "--cache-on",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run DeepEval with its result cache writes on, once per concurrency",
    )
    parser.add_argument("--cache-on-limit", type=float, default=300.0, metavar="SECONDS")
    parser.add_argument("--latency", type=float, default=0.05, metavar="SECONDS")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/seatrial-peers"))
    parser.add_argument("--out", type=Path, default=Path("peers.md"))
    parser.add_argument("--measure-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_child is not None:
        measure_child(json.loads(args.measure_child))
        return
    tools = [t for t in args.tools if t != "deepeval-cache"]
    cache_on = args.cache_on and ("deepeval" in args.tools or "deepeval-cache" in args.tools)
    versions = install(args.scratch, tools + (["deepeval"] if cache_on else []))
    work = args.scratch / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    load = os.getloadavg()
    header = (
        f"{args.cases} cases, agent answers after {args.latency * 1000:.0f} ms, "
        f"{os.cpu_count()} CPUs, load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        "versions: " + ", ".join(f"{tool} {version}" for tool, version in versions.items())
    )
    print(header, flush=True)
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    with agent_server(args.latency) as url:
        # One small untimed run of each tool first: bytecode caches written, files in the page
        # cache, so no tool pays a first start that the others do not.
        (work / "warm-up").mkdir()
        for tool in tools:
            checked(tool, TOOLS[tool](url, 20, 8, work / "warm-up", args.scratch), 20, 8)
        plan: list[tuple[int, str, Callable[..., Command]]] = []
        for round_number in range(args.rounds):
            for concurrency in args.concurrency:
                plan.extend((concurrency, tool, TOOLS[tool]) for tool in tools)
                if cache_on and round_number == 0:
                    command = deepeval_factory(write_cache=True, limit_s=args.cache_on_limit)
                    plan.append((concurrency, "deepeval-cache", command))
        for concurrency, tool, make in plan:
            command = make(url, args.cases, concurrency, work, args.scratch)
            figures = checked(tool, command, args.cases, concurrency)
            print(
                f"{tool:>15} c={concurrency:<3} wall {figures['wall_s']:6.2f} s  "
                f"CPU {figures['cpu_s']:6.2f} s  peak {figures['peak_mb']:6.1f} MB"
                + ("  (stopped at the limit)" if figures["timed_out"] else ""),
                flush=True,
            )
            results.setdefault((tool, concurrency), []).append(figures)
    load = os.getloadavg()
    text = (
        header
        + f"; load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n\n"
        + table(results, args.cases)
        + "\n"
    )
    print()
    print(text)
    args.out.write_text(text)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
