"""How long ``load_suite`` takes on a YAML suite of N single-turn cases.

Each case has an id, a one-line input, tags and two assertions (``contains`` and ``regex``),
the shape of the peers' side-by-side benchmark (issue 13). The file is written once; the
figure is the best of ``--repeat`` loads in this process, and the time of one parse of the
same text with PyYAML alone (C loader when present, pure-Python loader) is printed beside it
to show what is YAML's and what is validation's.

    .venv/bin/python benchmarks/suite_load.py [--cases N] [--repeat N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from seatrial.case import load_suite


def suite_text(cases: int) -> str:
    """A suite of ``cases`` single-turn cases with a ``contains`` and a ``regex`` check."""
    lines = ["suite: load-benchmark", "cases:"]
    for number in range(cases):
        lines += [
            f"  - id: case-{number:05d}",
            f'    input: "Where is order A{number:05d}? It should have arrived yesterday."',
            "    tags: [orders, p1]",
            "    assertions:",
            "      - type: contains",
            f"        value: A{number:05d}",
            "      - type: regex",
            '        value: "(shipped|delivered|on its way)"',
        ]
    return "\n".join(lines) + "\n"


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The shortest wall time of ``repeat`` calls of ``work``, in seconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    """Write the suite, time loading it, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = suite_text(args.cases)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "suite.yaml"
        path.write_text(text, encoding="utf-8")
        assert len(load_suite(path).cases) == args.cases
        load = best_of(args.repeat, lambda: load_suite(path))
    c_loader = getattr(yaml, "CSafeLoader", None)
    print(f"{args.cases} cases, {len(text) / 1024:.0f} KiB, libyaml: {yaml.__with_libyaml__}")
    print(f"load_suite:                  {load:.3f} s (best of {args.repeat})")
    if c_loader is not None:
        parse_c = best_of(args.repeat, lambda: yaml.load(text, Loader=c_loader))
        print(f"yaml.load, C loader:         {parse_c:.3f} s")
    parse_py = best_of(args.repeat, lambda: yaml.load(text, Loader=yaml.SafeLoader))
    print(f"yaml.load, pure-Python:      {parse_py:.3f} s")


if __name__ == "__main__":
    main()
