"""Every package's public surface is its ``__all__``, and the docs use nothing else.

Derived from the package itself: every package under ``src/seatrial`` (and every module that
declares ``__all__``) must list names that exist, in the order ``ruff`` sorts ``__all__``
(RUF022: CONSTANTS, then Classes, then the rest). Derived from the docs themselves: every
``from seatrial.X import Y``, ``import seatrial.X`` and ``seatrial.X.Y`` in the code blocks of
docs/*.md and README.md names a public module and a name that module exports, so a reader who
copies an example never depends on a private module that a refactor may move.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOCS = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
PYTHON_BLOCKS = {"python", "py", "pycon"}


# --- the packages' own ``__all__`` -------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _declares_all(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in tree.body
    )


PACKAGES = sorted(_module_name(p) for p in (SRC / "seatrial").rglob("__init__.py"))
MODULES_WITH_ALL = sorted(
    _module_name(p)
    for p in (SRC / "seatrial").rglob("*.py")
    if p.name != "__init__.py" and _declares_all(p)
)


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name)]


def all_sort_key(name: str) -> tuple[int, list[tuple[int, int | str]]]:
    """ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then anything else; natural within."""
    if len(name) > 1 and re.fullmatch(r"[A-Z0-9_]+", name) and any(c.isalpha() for c in name):
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, _natural(name)


def all_problems(module: ModuleType) -> list[str]:
    """What is wrong with a module's ``__all__``: missing, names that do not exist, order."""
    names = getattr(module, "__all__", None)
    if names is None:
        return [f"{module.__name__} has no __all__: list its public names"]
    problems = [
        f"{module.__name__}.__all__ lists {name!r}, which the module does not define"
        for name in names
        if not hasattr(module, name)
    ]
    repeated = sorted({name for name in names if list(names).count(name) > 1})
    if repeated:
        problems.append(f"{module.__name__}.__all__ repeats {repeated}")
    if list(names) != sorted(names, key=all_sort_key):
        problems.append(
            f"{module.__name__}.__all__ is not sorted: `ruff check --select RUF022 --fix` sorts it"
        )
    return problems


@pytest.mark.parametrize("name", PACKAGES + MODULES_WITH_ALL)
def test_every_name_in_all_exists_and_all_is_sorted(name):
    assert all_problems(importlib.import_module(name)) == []


def test_every_package_is_checked():
    # A walk that found nothing would pass vacuously.
    assert {"seatrial", "seatrial.case", "seatrial.config", "seatrial.pii", "seatrial.store"} <= (
        set(PACKAGES)
    )
    assert "seatrial.assertion._registry" in MODULES_WITH_ALL


def _fake(name: str, names: list[str], defined: list[str]) -> ModuleType:
    module = ModuleType(name)
    for each in defined:
        setattr(module, each, object())
    module.__all__ = names  # type: ignore[attr-defined]
    return module


def test_a_name_listed_but_not_defined_is_a_problem():
    module = _fake("pkg", ["Store", "open_store"], defined=["Store"])
    assert all_problems(module) == [
        "pkg.__all__ lists 'open_store', which the module does not define"
    ]


def test_all_in_plain_alphabetical_order_is_not_rufs_order():
    module = _fake(
        "pkg", ["AgentRun", "DB_URL", "mask_url"], defined=["AgentRun", "DB_URL", "mask_url"]
    )
    (problem,) = all_problems(module)
    assert "not sorted" in problem


def test_constants_then_classes_then_the_rest_is_sorted():
    names = [
        "LATEST",
        "TRANSITIONS",
        "TRANSITION_TITLES",
        "Case",
        "Gate2",
        "Gate10",
        "__version__",
        "load",
    ]
    assert all_problems(_fake("pkg", names, defined=names)) == []


def test_a_module_without_all_is_a_problem():
    assert all_problems(ModuleType("pkg")) == ["pkg has no __all__: list its public names"]


# --- what the docs' code blocks import ------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """One use of a Seatrial name in a docs code block."""

    where: str
    module: str
    name: str | None  # None: the module itself (``import seatrial.x``)


@dataclass(frozen=True)
class Block:
    where: str
    language: str
    text: str


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")


def code_blocks(text: str, source: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, each with the line it starts on."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, language, start = opening.group(1), opening.group(2).lower(), i + 1
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        blocks.append(Block(f"{source}:{start + 1}", language, "\n".join(body)))
        i += 1
    return blocks


_FROM_IMPORT = re.compile(r"^\s*from\s+(seatrial(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n#]+)", re.M)
_IMPORT = re.compile(r"^\s*import\s+(seatrial(?:\.\w+)+)", re.M)
_STRINGS = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|#[^\n]*")
_DOTTED = re.compile(r"(?<![\w.])seatrial((?:\.\w+)+)")


def _imported_names(clause: str) -> list[str]:
    clause = re.sub(r"#[^\n]*", "", clause).strip("() \n")
    return [part.split(" as ")[0].strip() for part in clause.split(",") if part.strip()]


def references(block: Block) -> list[Reference]:
    """The Seatrial names a code block uses.

    Import statements are read in any block (a shell example may hold a ``python -c``); dotted
    uses (``seatrial.run_suite(...)``) only in Python blocks, outside strings and comments, as
    elsewhere ``seatrial.yaml`` is a file name.
    """
    found: list[Reference] = []
    for match in _FROM_IMPORT.finditer(block.text):
        found += [
            Reference(block.where, match.group(1), n) for n in _imported_names(match.group(2))
        ]
    for match in _IMPORT.finditer(block.text):
        found.append(Reference(block.where, match.group(1), None))
    if block.language in PYTHON_BLOCKS:
        code = _STRINGS.sub("", block.text)
        code = "\n".join(
            line for line in code.splitlines() if not re.match(r"\s*(from|import)\s", line)
        )
        for match in _DOTTED.finditer(code):
            *path, name = ["seatrial", *match.group(1).lstrip(".").split(".")]
            found.append(Reference(block.where, ".".join(path), name))
    return found


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _import(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def problem_of(ref: Reference) -> str | None:
    """Why a docs reference is not to a public, exported name, or None when it is."""
    shown = ref.module if ref.name is None else f"{ref.module}.{ref.name}"
    if _private(ref.module):
        return f"{ref.where}: {shown} goes through a private module; import it from its package"
    # ``seatrial.a.b.c`` written as attribute access: walk modules while they are modules.
    parts = ref.module.split(".")
    module = _import(parts[0])
    for depth, part in enumerate(parts[1:], start=2):
        if module is None:
            break
        inner = getattr(module, part, None)
        if inner is not None and not isinstance(inner, ModuleType):
            return (
                None if part in getattr(module, "__all__", ()) else _unexported(ref, module, part)
            )
        module = _import(".".join(parts[:depth]))
    if module is None:
        return f"{ref.where}: no module {ref.module}"
    if ref.name is None:
        return None
    if ref.name in getattr(module, "__all__", ()):
        return None
    if not _private(ref.name) and _import(f"{ref.module}.{ref.name}") is not None:
        return None  # a public submodule, e.g. ``from seatrial import compare``
    return _unexported(ref, module, ref.name)


def _unexported(ref: Reference, module: ModuleType, name: str) -> str:
    if not hasattr(module, "__all__"):
        return f"{ref.where}: {module.__name__} has no __all__, so {name} is not exported"
    return f"{ref.where}: {module.__name__} does not export {name} (add it to its __all__)"


def docs_references() -> list[Reference]:
    found: list[Reference] = []
    for path in DOCS:
        for block in code_blocks(path.read_text(encoding="utf-8"), path.name):
            found += references(block)
    return found


def test_docs_code_blocks_use_only_exported_names():
    problems = [p for p in map(problem_of, docs_references()) if p is not None]
    assert problems == []


def test_the_docs_walk_sees_the_documented_imports():
    seen = {(r.module, r.name) for r in docs_references()}
    assert ("seatrial.case", "load_suite") in seen
    assert (
        "seatrial",
        "run_suite",
    ) in seen  # ``seatrial.run_suite(...)`` after ``import seatrial``
    assert ("seatrial.store", "Store") in seen


def _refs(markdown: str) -> list[str]:
    found = [r for b in code_blocks(markdown, "doc.md") for r in references(b)]
    return [p for p in map(problem_of, found) if p is not None]


def test_a_private_module_in_a_docs_example_is_reported():
    text = "```python\nfrom seatrial.compare._diff import diff_traces\n```\n"
    assert _refs(text) == [
        "doc.md:2: seatrial.compare._diff.diff_traces goes through a private module; "
        "import it from its package"
    ]


def test_a_name_the_package_does_not_export_is_reported():
    text = (
        "```python\nfrom seatrial.compare import (\n    diff_traces,\n    _verdict,  # no\n)\n```\n"
    )
    assert _refs(text) == [
        "doc.md:2: seatrial.compare does not export _verdict (add it to its __all__)"
    ]


def test_an_exported_name_and_a_public_submodule_pass():
    text = (
        "```python\nfrom seatrial.compare import diff_traces\nfrom seatrial import compare\n```\n"
    )
    assert _refs(text) == []


def test_dotted_uses_are_checked_in_python_blocks_only():
    python = (
        "```python\nimport seatrial\nseatrial.run_suite('s.yaml', 'a')\nseatrial.no_such()\n```\n"
    )
    assert _refs(python) == ["doc.md:2: seatrial does not export no_such (add it to its __all__)"]
    shell = "```bash\nseatrial run --config seatrial.yaml\n```\n"
    assert _refs(shell) == []
    in_string = "```python\nload_config('seatrial.yaml')  # reads seatrial.yaml\n```\n"
    assert _refs(in_string) == []


def test_a_dotted_use_through_a_subpackage_is_checked_against_that_package():
    assert _refs("```python\nseatrial.compare.run_meets_gates(store, run)\n```\n") == []
    assert _refs("```python\nseatrial.compare.nothing_here(store)\n```\n") == [
        "doc.md:2: seatrial.compare does not export nothing_here (add it to its __all__)"
    ]
