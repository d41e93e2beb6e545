"""How long the ``seatrial`` command takes to start: ``import seatrial.cli``, ``seatrial
--help``, ``seatrial validate`` on the repository's example suites and ``seatrial runs`` on a
store holding four runs, each in a fresh process.

Every figure is the best of ``--repeat`` runs (wall time, and the CPU time of that run), next to
the floors: the interpreter alone; the interpreter importing Typer and Rich, which every command
needs to parse its arguments and print; pydantic, which validating a suite needs; SQLAlchemy,
which opening the store needs; and, for scale, a plain Typer command with ``runs``' options
printing a Rich table with SQLAlchemy imported (running a command, not only importing Typer:
Typer coerces each option through pydantic). The store is made once, in a temporary folder, by
two ``seatrial demo`` runs. It also prints the load average the figures were taken at, how many
modules each command loads with the heavy libraries among them, and whether each of
``--help``, ``validate`` and ``runs`` starts in under :data:`GOAL_CPU_S` of CPU (issue 23).

Everything is compiled to bytecode first, as an installed package's is (pip compiles what it
installs): Seatrial's modules and the environment's libraries, with ``compileall``, and the
commands run with PYTHONDONTWRITEBYTECODE unset (the shared machine sets it, which would have
every command compile each module it imports again).

    .venv/bin/python benchmarks/cli_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HEAVY = (
    "alembic",
    "asyncio",
    "fastapi",
    "httpx",
    "jsonschema",
    "numpy",
    "openai",
    "openpyxl",
    "pydantic",
    "scipy",
    "sklearn",
    "sqlalchemy",
    "starlette",
    "uvicorn",
)
"""Libraries a command may need when it runs, never to start (asyncio, jsonschema and pydantic
are listed to show which of the three commands load them)."""

_MODULES = """
import json, sys
import seatrial.cli
if {args!r} is not None:
    sys.argv = ["seatrial", *{args!r}]
    try:
        seatrial.cli.main()
    except SystemExit:
        pass
sys.stderr.write(json.dumps([sorted({{m.split('.')[0] for m in sys.modules}} & {heavy!r}),
                             len(sys.modules)]))
"""

_TYPER_COMMAND = """
import gc
gc.set_threshold(50_000, 20, 100)
from typing import Optional
import sqlalchemy, typer
from rich.console import Console
from rich.table import Table
def runs(limit: int = 20, suite: Optional[str] = None, agent: Optional[str] = None,
         tag: Optional[str] = None, format: str = "text", db: Optional[str] = None,
         lang: Optional[str] = None) -> None:
    table = Table()
    table.add_column("run")
    table.add_row("20261207-233235-d320d4")
    Console().print(table)
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command()(runs)
app()
"""
"""For scale beside ``seatrial runs``: a plain Typer command with the same options (Typer
coerces each through a pydantic TypeAdapter, so running any command loads pydantic), printing a
Rich table, with SQLAlchemy imported, and the garbage collector set as ``seatrial`` sets it
while a command runs (``cli/_app.py``, ``command_gc``). It is not a floor: ``seatrial`` builds
only the command it runs and loads less of Rich, so ``runs`` may take less."""

GOAL_CPU_S = 0.3
"""Issue 23's goal: ``seatrial --help``, ``validate`` and ``runs`` each start in less CPU."""

REPO = Path(__file__).resolve().parent.parent
SUITES = [REPO / "examples" / "booking" / "suites", REPO / "src/seatrial/demo/project/suites"]
"""The suites ``seatrial validate`` checks: the example project's and the demo's."""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_of(repeat: int, command: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """The shortest wall time of ``repeat`` runs of ``command``, and that run's CPU time."""
    runs = []
    for _ in range(repeat):
        cpu = _child_cpu()
        started = time.perf_counter()
        subprocess.run(
            command, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        runs.append((time.perf_counter() - started, _child_cpu() - cpu))
    return min(runs)


def imported(python: str, args: list[str] | None, cwd: Path) -> tuple[list[str], int]:
    """The heavy libraries ``seatrial ARGS`` loads (``import seatrial.cli`` when ``args`` is
    None), and how many modules it loads in all."""
    done = subprocess.run(
        [python, "-c", _MODULES.format(args=args, heavy=set(HEAVY))],
        check=True,
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    heavy, count = json.loads(done.stderr.splitlines()[-1])
    return heavy, count


def demo_store(seatrial: str, folder: Path) -> str:
    """A SQLite store in ``folder`` holding four runs (``seatrial demo`` twice); its URL."""
    url = f"sqlite:///{folder / 'seatrial.db'}"
    for _ in range(2):
        subprocess.run(
            [seatrial, "demo", "--db", url, "--report-dir", str(folder / "report")],
            check=True,
            cwd=folder,
            stdout=subprocess.DEVNULL,
        )
    return url


def main() -> None:
    """Time the command's start-up and its floors; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    seatrial = str(Path(python).with_name("seatrial"))
    if not os.path.exists(seatrial):
        sys.exit(f"no {seatrial}: install the project into this interpreter's environment")
    # An installed Seatrial starts from compiled bytecode (pip compiles it); this checkout's
    # does only if its .pyc files are written, which PYTHONDONTWRITEBYTECODE (set on the
    # shared machine) stops: every command would compile Seatrial's sources again. So the
    # benchmark compiles them, and its commands run without it.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compiled()
    with tempfile.TemporaryDirectory(prefix="seatrial-startup-") as tmp:
        folder = Path(tmp)
        url = demo_store(seatrial, folder)
        validate = ["validate", *map(str, SUITES)]
        runs = ["runs", "--db", url]
        cases = [
            ("python -c pass (the interpreter)", [python, "-c", "pass"]),
            ("import typer, rich.table (the floor)", [python, "-c", "import typer, rich.table"]),
            ("  + import pydantic", [python, "-c", "import typer, rich.table, pydantic"]),
            ("  + import sqlalchemy", [python, "-c", "import typer, rich.table, sqlalchemy"]),
            ("a plain Typer command like runs'", [python, "-c", _TYPER_COMMAND]),
            ("import seatrial.cli", [python, "-c", "import seatrial.cli"]),
            ("seatrial --help", [seatrial, "--help"]),
            ("seatrial run --help", [seatrial, "run", "--help"]),
            ("seatrial validate (4 suite files)", [seatrial, *validate]),
            ("seatrial runs (4 runs)", [seatrial, *runs]),
        ]
        best_of(1, [python, "-c", "import seatrial.cli"])  # warm the file cache and .pyc files
        print(f"load average before: {_load()}")
        print(f"best of {args.repeat}, wall / CPU:")
        cpu_of = {}
        for name, command in cases:
            wall, cpu = best_of(args.repeat, command, cwd=folder)
            cpu_of[name] = cpu
            print(f"  {name:<40} {wall:6.3f} s / {cpu:6.3f} s")
        print(f"load average after: {_load()}")
        print(f"goal: under {GOAL_CPU_S} s of CPU; each command against the floor it needs:")
        for name, floor in (
            ("seatrial --help", "import typer, rich.table (the floor)"),
            ("seatrial validate (4 suite files)", "  + import pydantic"),
            ("seatrial runs (4 runs)", "  + import sqlalchemy"),
        ):
            verdict = "met" if cpu_of[name] < GOAL_CPU_S else "NOT met"
            ratio = cpu_of[name] / cpu_of[floor]
            print(f"  {name:<40} {verdict:<8} {ratio:4.2f}x ({floor.strip()})")
        for name, command_args in (
            ("import seatrial.cli", None),
            ("seatrial --help", ["--help"]),
            ("seatrial validate", validate),
            ("seatrial runs", runs),
        ):
            heavy, count = imported(python, command_args, folder)
            print(f"{name} loads {count} modules; heavy ones: {', '.join(heavy) or 'none'}")


def compiled() -> None:
    """Compile Seatrial's modules and the environment's libraries to bytecode (only what is
    missing or stale), as installing them does."""
    folders = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    folders.add(str(REPO / "src"))
    for folder in sorted(folders):
        if os.path.isdir(folder) and not compileall.compile_dir(folder, quiet=2, workers=0):
            print(f"note: some files under {folder} did not compile")


def _load() -> str:
    return " ".join(f"{figure:.2f}" for figure in os.getloadavg())


if __name__ == "__main__":
    main()
