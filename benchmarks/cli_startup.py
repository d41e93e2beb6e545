"""How long the ``seatrial`` command takes to start: ``seatrial --help`` and ``import
seatrial.cli``, each in a fresh process.

Every figure is the best of ``--repeat`` runs (wall time, and the CPU time of that run), next to
two floors: the interpreter alone, and the interpreter importing Typer and Rich, which every
command needs to parse its arguments and print. It also prints how many modules ``import
seatrial.cli`` loads and which heavy libraries among them (none is expected: each command
imports what it calls when it runs).

    .venv/bin/python benchmarks/cli_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HEAVY = (
    "alembic",
    "fastapi",
    "httpx",
    "numpy",
    "openai",
    "openpyxl",
    "scipy",
    "sklearn",
    "sqlalchemy",
    "starlette",
    "uvicorn",
)
"""Libraries a command may need when it runs, never to start."""

_MODULES = (
    "import json, sys, seatrial.cli; "
    "print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {heavy!r}), "
    "separators=(',', ':')), len(sys.modules))"
)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_of(repeat: int, command: list[str]) -> tuple[float, float]:
    """The shortest wall time of ``repeat`` runs of ``command``, and that run's CPU time."""
    runs = []
    for _ in range(repeat):
        cpu = _child_cpu()
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs.append((time.perf_counter() - started, _child_cpu() - cpu))
    return min(runs)


def imported(python: str) -> tuple[list[str], int]:
    """The heavy libraries ``import seatrial.cli`` loads, and how many modules it loads in all."""
    out = subprocess.run(
        [python, "-c", _MODULES.format(heavy=set(HEAVY))],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return json.loads(out[0]), int(out[1])


def main() -> None:
    """Time the command's start-up and its floors; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    seatrial = str(Path(python).with_name("seatrial"))
    if not os.path.exists(seatrial):
        sys.exit(f"no {seatrial}: install the project into this interpreter's environment")
    cases = [
        ("python -c pass (the interpreter)", [python, "-c", "pass"]),
        ("import typer, rich.table (the floor)", [python, "-c", "import typer, rich.table"]),
        ("import seatrial.cli", [python, "-c", "import seatrial.cli"]),
        ("seatrial --help", [seatrial, "--help"]),
        ("seatrial run --help", [seatrial, "run", "--help"]),
    ]
    best_of(1, [python, "-c", "import seatrial.cli"])  # warm the file cache and .pyc files
    print(f"best of {args.repeat}, wall / CPU:")
    for name, command in cases:
        wall, cpu = best_of(args.repeat, command)
        print(f"  {name:<40} {wall:6.3f} s / {cpu:6.3f} s")
    heavy, count = imported(python)
    print(f"import seatrial.cli loads {count} modules; heavy ones: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
