"""No cycle between Seatrial's packages: the import graph of src/seatrial is walked as written.

Every ``import`` counts, the lazy ones inside functions too (a lazy import is still a
dependency, only a hidden one); imports under ``if TYPE_CHECKING:`` do not, as they never run.
The nodes are the top-level packages (``seatrial.case``, ``seatrial.store``, ...) and the
top-level modules (``seatrial.config``, ``seatrial.record``, ``seatrial._execute``, ...).
Modules that a registry loads by name at run time (the built-in assertion types, plugins) are
not imports and are not edges.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "seatrial"

KNOWN: frozenset[tuple[str, str]] = frozenset()
"""Edges allowed to close a cycle for now, each with the issue that removes it.

Empty: add ``(from_node, to_node)`` here only with a comment naming the issue that will take
the edge away again.
"""


@dataclass(frozen=True)
class Edge:
    """One import between two nodes, and where it is written."""

    source: str
    target: str
    where: str


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for other in node.orelse:  # the ``else:`` branch does run
                yield from _imports_in(other)
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node)


def _targets(statement: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The full names a statement imports (for ``from a import b``, ``a.b`` and ``a``)."""
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    if statement.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base_parts = package[: len(package) - (statement.level - 1)]
        base = ".".join([*base_parts, *([statement.module] if statement.module else [])])
    else:
        base = statement.module or ""
    return [base, *(f"{base}.{alias.name}" for alias in statement.names)]


def _node(name: str, nodes: set[str]) -> str | None:
    """The graph node a full module name belongs to, if it is one of ours."""
    parts = name.split(".")
    if parts[0] != ROOT or len(parts) < 2:
        return None
    node = f"{ROOT}.{parts[1]}"
    return node if node in nodes else None


def import_edges(src: Path, root: str = ROOT) -> list[Edge]:
    """Every import from one node to another under ``src/root``, with its file and line."""
    package = src / root
    nodes = {
        f"{root}.{child.stem}"
        for child in package.iterdir()
        if (child.is_dir() and (child / "__init__.py").exists())
        or (child.suffix == ".py" and child.stem != "__init__")
    }
    edges: list[Edge] = []
    for path in sorted(package.rglob("*.py")):
        module = _module_name(path, src)
        source = _node(module, nodes)
        if source is None:
            continue  # the root package's own __init__: a facade of lazy names
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for statement in _imports(tree):
            for name in _targets(statement, module, path.name == "__init__.py"):
                target = _node(name, nodes)
                if target is not None and target != source:
                    where = f"{path.relative_to(src)}:{statement.lineno}"
                    edges.append(Edge(source, target, where))
    return edges


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The groups of nodes that reach each other (strongly connected, more than one node)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _described(group: list[str], edges: list[Edge]) -> str:
    inside = sorted(
        {
            (e.source, e.target): e for e in edges if e.source in group and e.target in group
        }.values(),
        key=lambda e: (e.source, e.target),
    )
    lines = [f"  {e.source} -> {e.target}  ({e.where})" for e in inside]
    return "cycle between " + ", ".join(group) + ":\n" + "\n".join(lines)


def test_no_cycle_between_seatrial_packages():
    edges = [e for e in import_edges(SRC) if (e.source, e.target) not in KNOWN]
    found = cycles(edges)
    assert not found, "\n".join(_described(group, edges) for group in found)


def test_every_known_exception_is_still_an_import():
    edges = {(e.source, e.target) for e in import_edges(SRC)}
    assert not KNOWN - edges, f"remove from KNOWN, the import is gone: {sorted(KNOWN - edges)}"


# The walker itself, on small packages written for the purpose: it must see what runs, and
# nothing that does not.


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "seatrial" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "back_edge",
    [
        "from seatrial.a import x\n",
        "import seatrial.a._impl\n",
        "from seatrial import a\n",
        "def later():\n    from seatrial.a import x\n",
        "class C:\n    def m(self):\n        import seatrial.a\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n"
        "    import seatrial.a\n",
    ],
    ids=["from", "import-private", "from-root", "lazy-in-function", "lazy-in-method", "else"],
)
def test_a_cycle_is_found_however_the_back_edge_is_written(tmp_path, back_edge):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from seatrial.b._impl import y\nx = 1\n",
            "a/_impl.py": "",
            "b/__init__.py": "",
            "b/_impl.py": back_edge + "y = 2\n",
        },
    )
    assert cycles(import_edges(src)) == [["seatrial.a", "seatrial.b"]]


@pytest.mark.parametrize(
    "back_edge",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from seatrial.a import x\n",
        "import typing\nif typing.TYPE_CHECKING:\n    import seatrial.a\n",
        "from . import _other\n",
        "import seatrial_other\n",
        "x = 'seatrial.a'\n",
    ],
    ids=["type-checking", "typing.type-checking", "relative-same-package", "prefix-only", "string"],
)
def test_what_never_runs_or_stays_inside_a_package_is_no_cycle(tmp_path, back_edge):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from seatrial.b._impl import y\nx = 1\n",
            "b/__init__.py": "",
            "b/_other.py": "",
            "b/_impl.py": back_edge + "y = 2\n",
        },
    )
    assert cycles(import_edges(src)) == []


def test_a_relative_import_reaching_another_package_is_an_edge(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "config.py": "from .store import s\n",
            "store/__init__.py": "from ..config import c\ns = 1\n",
        },
    )
    assert cycles(import_edges(src)) == [["seatrial.config", "seatrial.store"]]


def test_a_cycle_through_three_packages_names_every_edge(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "store/__init__.py": "from seatrial.judge import j\n",
            "judge/__init__.py": "from seatrial.gateway import g\n",
            "gateway/__init__.py": "def f():\n    from seatrial.store import s\n",
        },
    )
    edges = import_edges(src)
    (group,) = cycles(edges)
    described = _described(group, edges)
    assert "seatrial.gateway -> seatrial.store  (seatrial/gateway/__init__.py:2)" in described
    assert "seatrial.store -> seatrial.judge" in described


# No private import across packages. ``lint-imports`` checks private modules (its
# ``private_modules`` contract); this walk also sees what that contract cannot: imports under
# ``if TYPE_CHECKING:`` (a type is coupling too) and private names (``from seatrial.x import
# _helper``). An exception is named once, with its reason, in that contract's ``ignore_imports``.

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _private_parts(name: str) -> list[int]:
    parts = name.split(".")
    return [i for i, part in enumerate(parts) if part.startswith("_") and not part.startswith("__")]


def private_imports(src: Path, root: str = ROOT) -> list[Edge]:
    """Every import of a private module or name from outside the package that holds it."""
    found: list[Edge] = []
    for path in sorted((src / root).rglob("*.py")):
        module = _module_name(path, src)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for statement in ast.walk(tree):
            if not isinstance(statement, ast.Import | ast.ImportFrom):
                continue
            outside = [
                name
                for name in _targets(statement, module, path.name == "__init__.py")
                if name.split(".")[0] == root and not _inside_owner(module, name)
            ]
            if outside:  # ``from a._b import c`` names ``a._b`` and ``a._b.c``: one finding
                where = f"{path.relative_to(src)}:{statement.lineno}"
                found.append(Edge(module, min(outside, key=len), where))
    return found


def _inside_owner(module: str, name: str) -> bool:
    """Whether ``module`` lies in the package that owns the private parts of ``name``.

    The owner is the top-level package (``seatrial.store`` for ``seatrial.store._schema``),
    or Seatrial itself for a top-level private module (``seatrial._execute``): inside its own
    package a private module is a file layout choice, across packages it is a dependency on
    what the owner may move.
    """
    private = _private_parts(name)
    if not private:
        return True
    owner = ".".join(name.split(".")[: min(private[0], 2)])
    return module == owner or module.startswith(owner + ".")


def named_exceptions() -> set[tuple[str, str]]:
    """The ``importer -> imported`` pairs the private-modules contract names as exceptions."""
    import tomllib

    settings = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    (private,) = [c for c in contracts if c["type"] == "private_modules"]
    pairs = (line.split("->") for line in private.get("ignore_imports", []))
    return {(importer.strip(), imported.strip()) for importer, imported in pairs}


def _excepted(edge: Edge, exceptions: set[tuple[str, str]]) -> bool:
    return any(
        edge.source == importer and (edge.target + ".").startswith(imported + ".")
        for importer, imported in exceptions
    )


def test_no_private_import_across_packages():
    exceptions = named_exceptions()
    found = [e for e in private_imports(SRC) if not _excepted(e, exceptions)]
    assert not found, "import these from their package's __init__ instead:\n" + "\n".join(
        f"  {e.where}: {e.target}" for e in found
    )


def test_the_private_walk_covers_every_package():
    # Every package of Seatrial lies under the private-modules contract; a narrower list would
    # let a new package's private modules be imported from anywhere.
    import tomllib

    settings = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    (private,) = [c for c in contracts if c["type"] == "private_modules"]
    assert private["packages_with_private_modules"] == [ROOT]


@pytest.mark.parametrize(
    "statement",
    [
        "from seatrial.b._impl import y\n",
        "import seatrial.b._impl\n",
        "from seatrial.b import _helper\n",
        "from ..b._impl import y\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from seatrial.b._impl import y\n",
        "def later():\n    from seatrial.b._impl import y\n",
    ],
    ids=["from", "import", "private-name", "relative", "type-checking", "lazy"],
)
def test_a_private_import_from_another_package_is_found(tmp_path, statement):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/_user.py": statement,
            "b/__init__.py": "",
            "b/_impl.py": "y = 1\n_helper = 2\n",
        },
    )
    (edge,) = private_imports(src)
    assert edge.source == "seatrial.a._user"
    assert edge.where == "seatrial/a/_user.py:" + str(statement.count("\n"))


@pytest.mark.parametrize(
    "statement",
    [
        "from seatrial.b import y\n",  # the package's public name
        "from seatrial._front import run\n",  # a top-level private module: seatrial's own
        "from seatrial import __version__\n",  # dunder names are not private
        "import seatrial_b._impl\n",  # not Seatrial
    ],
    ids=["public", "top-level-private", "dunder", "other-root"],
)
def test_a_public_or_top_level_import_is_no_private_import(tmp_path, statement):
    src = _package(
        tmp_path,
        {
            "__init__.py": "__version__ = '1'\n",
            "_front.py": "run = 1\n",
            "a/__init__.py": "",
            "a/_user.py": statement,
            "b/__init__.py": "from seatrial.b._impl import y\nfrom . import _impl\n",
            "b/_impl.py": "y = 1\n_helper = 2\n",
            "b/deep/__init__.py": "from seatrial.b._impl import y\n",
            "b/_sibling.py": "from seatrial.b._impl import _helper\n",  # same package
        },
    )
    assert private_imports(src) == []


def test_a_named_exception_is_matched_on_the_importer_and_the_module():
    edge = Edge("seatrial.a._user", "seatrial.b._impl.y", "seatrial/a/_user.py:1")
    assert _excepted(edge, {("seatrial.a._user", "seatrial.b._impl")})
    assert not _excepted(edge, {("seatrial.a._other", "seatrial.b._impl")})
    assert not _excepted(edge, {("seatrial.a._user", "seatrial.b._im")})


# -- the CLI: each option declared once, no command module leaning on another ------------------

CLI = SRC / ROOT / "cli"
OPTIONS_MODULE = "_options.py"


def _option_names(call: ast.Call, parameter: str) -> list[str]:
    """The long names a ``typer.Option(...)`` call declares: the ``--`` strings it is given, or
    the one Typer derives from the parameter's name."""
    given = [
        arg.value
        for arg in call.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]
    names = [name.split("/")[0] for name in given if name.startswith("--")]
    return names or ["--" + parameter.replace("_", "-")]


def _is_typer_option(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "Option"
    )


def option_declarations(cli: Path) -> dict[str, list[str]]:
    """Each option name declared outside ``cli/_options.py``, with where: a parameter whose
    ``Annotated[...]`` or default holds a ``typer.Option(...)``."""
    found: dict[str, list[str]] = {}
    for path in sorted(cli.rglob("*.py")):
        if path.name == OPTIONS_MODULE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        aliases = {  # ``Db = Annotated[str, typer.Option(...)]`` in a command module
            target.id: node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        declared: set[tuple[str, str]] = set()  # an alias used by many parameters: one place
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            arguments = function.args
            defaults: list[ast.expr | None] = [None] * (
                len(arguments.args) - len(arguments.defaults)
            ) + list(arguments.defaults)
            pairs = [*zip(arguments.args, defaults, strict=True)]
            pairs += [*zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]
            for argument, default in pairs:
                calls = [default] if default is not None and _is_typer_option(default) else []
                annotation = argument.annotation
                if isinstance(annotation, ast.Name) and annotation.id in aliases:
                    annotation = aliases[annotation.id]
                if annotation is not None:
                    calls += [n for n in ast.walk(annotation) if _is_typer_option(n)]
                for call in calls:
                    assert isinstance(call, ast.Call)
                    for name in _option_names(call, argument.arg):
                        where = f"{path.relative_to(cli.parent)}:{call.lineno}"
                        if (name, where) not in declared:
                            declared.add((name, where))
                            found.setdefault(name, []).append(where)
    return found


def test_every_cli_option_is_declared_once():
    twice = {name: where for name, where in option_declarations(CLI).items() if len(where) > 1}
    assert not twice, "declare these once in cli/_options.py and use the alias:\n" + "\n".join(
        f"  {name}: {', '.join(where)}" for name, where in sorted(twice.items())
    )


def command_modules(cli: Path) -> set[str]:
    """The modules of ``seatrial.cli`` that register commands (a ``@....command`` or
    ``@....callback`` decorator)."""
    found = set()
    for path in sorted(cli.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                isinstance(d, ast.Call)
                and isinstance(d.func, ast.Attribute)
                and d.func.attr in ("command", "callback")
                for d in node.decorator_list
            ):
                found.add(_module_name(path, cli.parents[1]))
                break
    return found


def command_module_imports(cli: Path) -> list[Edge]:
    """Every import, lazy ones too, of a name from a command module by another module of
    ``seatrial.cli`` (importing the module itself to register its commands is no such import)."""
    commands = command_modules(cli)
    found = []
    for path in sorted(cli.glob("*.py")):
        module = _module_name(path, cli.parents[1])
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for statement in ast.walk(tree):
            if isinstance(statement, ast.ImportFrom):
                targets = _targets(statement, module, path.name == "__init__.py")
                imported = [statement.module or ""] if statement.level == 0 else targets[:1]
            elif isinstance(statement, ast.Import):
                imported = [alias.name for alias in statement.names]
            else:
                continue
            for target in imported:
                if target in commands and target != module:
                    where = f"{path.relative_to(cli.parent)}:{statement.lineno}"
                    found.append(Edge(module, target, where))
    return found


def test_no_cli_module_imports_from_a_command_module():
    found = command_module_imports(CLI)
    assert not found, (
        "move what these share into a module that registers no command "
        "(cli/_options.py, cli/_context.py, ...):\n"
        + "\n".join(f"  {e.where}: {e.source} -> {e.target}" for e in found)
    )


def _cli(tmp_path: Path, files: dict[str, str]) -> Path:
    cli = tmp_path / "seatrial" / "cli"
    cli.mkdir(parents=True)
    for name, text in files.items():
        (cli / name).write_text(text, encoding="utf-8")
    return cli


_DB_COMMAND = (
    "@app.command()\n"
    "def {name}(db: Annotated[str | None, typer.Option(help='Store URL.')] = None): ...\n"
)


def test_an_option_two_commands_declare_is_found_however_it_is_written(tmp_path):
    cli = _cli(
        tmp_path,
        {
            "_a.py": _DB_COMMAND.format(name="a"),
            "_b.py": "Store = Annotated[str, typer.Option('--db', '-d')]\n"
            "@app.command()\ndef b(store: Store = None): ...\n",
            "_c.py": "@app.command()\ndef c(db: str = typer.Option(None)): ...\n",
        },
    )
    assert sorted(option_declarations(cli)["--db"]) == [
        "cli/_a.py:2",
        "cli/_b.py:1",
        "cli/_c.py:2",
    ]


def test_an_option_declared_once_in_options_and_used_everywhere_is_no_duplicate(tmp_path):
    cli = _cli(
        tmp_path,
        {
            "_options.py": "Db = Annotated[str, typer.Option('--db')]\n"
            "Db2 = Annotated[str, typer.Option('--db')]\n",
            "_a.py": "@app.command()\ndef a(db: Db = None): ...\n",
            "_b.py": "Who = Annotated[str, typer.Option('--who')]\n"
            "@app.command()\ndef b(db: Db = None, who: Who = None): ...\n"
            "@app.command()\ndef c(who: Who = None): ...\n",
        },
    )
    assert option_declarations(cli) == {"--who": ["cli/_b.py:1"]}


def test_a_helper_imported_from_a_command_module_is_found_lazy_or_not(tmp_path):
    cli = _cli(
        tmp_path,
        {
            "_run.py": "@app.command()\ndef run(): ...\ndef print_notice(): ...\n",
            "_ci.py": "from seatrial.cli._run import print_notice\n@app.command()\ndef ci(): ...\n",
            "_bench.py": "def bench():\n    from seatrial.cli import _run\n"
            "    from ._run import print_notice\n",
        },
    )
    found = sorted((e.source, e.target, e.where) for e in command_module_imports(cli))
    assert found == [
        ("seatrial.cli._bench", "seatrial.cli._run", "cli/_bench.py:3"),
        ("seatrial.cli._ci", "seatrial.cli._run", "cli/_ci.py:1"),
    ]


def test_registering_command_modules_and_importing_shared_modules_is_allowed(tmp_path):
    cli = _cli(
        tmp_path,
        {
            "__init__.py": "from seatrial.cli import _run  # registers\n",
            "_app.py": "app = typer.Typer()\ncases_app = typer.Typer()\n",
            "_context.py": "def open_store(db): ...\n",
            "_run.py": "from seatrial.cli._app import app\n"
            "from seatrial.cli._context import open_store\n"
            "@app.command()\ndef run(): ...\n",
        },
    )
    assert command_modules(cli) == {"seatrial.cli._run"}
    assert command_module_imports(cli) == []


# Every ``gen_ai.*`` name is spelled once, in trace/_attrs.py; elsewhere code says ``A.NAME``.
# A second spelling is how a typo (``gen_ai.usage.input_token``) ships: it reads nothing, and
# no test of the owner sees it. Docstrings and comments may mention the names.

ATTRS_OWNER = Path("seatrial/trace/_attrs.py")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of string constants standing alone as statements (docstrings, field notes)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def gen_ai_spellings(src: Path, root: str = ROOT) -> list[str]:
    """``file:line`` of every string literal holding ``gen_ai.`` outside the attributes' owner
    (f-string parts included, docstrings not)."""
    found: list[str] = []
    for path in sorted((src / root).rglob("*.py")):
        where = path.relative_to(src)
        if where == ATTRS_OWNER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        docstrings = _docstrings(tree)
        found += [
            f"{where}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "gen_ai." in node.value
            and id(node) not in docstrings
        ]
    return found


def test_gen_ai_names_are_spelled_only_in_trace_attrs():
    found = gen_ai_spellings(SRC)
    assert not found, "use (or add) the name in seatrial/trace/_attrs.py instead:\n" + "\n".join(
        f"  {line}" for line in found
    )


@pytest.mark.parametrize(
    "text",
    [
        'NAME = "gen_ai.usage.input_tokens"\n',
        'def f(span):\n    return span.attributes.get("gen_ai.request.model")\n',
        'def f(x):\n    raise ValueError(f"{x} lacks gen_ai.input.messages")\n',
        'PREFIXES = ("llm.prompts.", "gen_ai.prompt.")\n',
    ],
    ids=["constant", "lookup", "f-string", "prefix"],
)
def test_a_gen_ai_name_spelled_outside_trace_attrs_is_found(tmp_path, text):
    src = _package(tmp_path, {"__init__.py": "", "a/_user.py": text})
    (line,) = gen_ai_spellings(src)
    assert line.startswith("seatrial/a/_user.py:")


def test_the_owner_docstrings_and_attribute_names_are_no_second_spelling(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "trace/_attrs.py": 'OPERATION = "gen_ai.operation.name"\n',
            "a/_user.py": (
                '"""Reads ``gen_ai.operation.name``."""\n'
                "from seatrial.trace import attrs as A\n"
                'OP = A.OPERATION\n"""The ``gen_ai.operation.name`` of a span."""\n'
                "def f(span):\n"
                '    """The span\'s ``gen_ai.request.model``."""\n'
                "    return span.attributes.get(A.REQUEST_MODEL)  # gen_ai.request.model\n"
            ),
        },
    )
    assert gen_ai_spellings(src) == []


SETTINGS_OWNER = "seatrial/record/_settings.py"


def _is_settings(node: ast.expr) -> bool:
    """``settings`` or ``<anything>.settings``: a run's settings by their usual names."""
    return (isinstance(node, ast.Name) and node.id == "settings") or (
        isinstance(node, ast.Attribute) and node.attr == "settings"
    )


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


NESTED_SETTINGS = (
    "git",
    "dataset",
    "baseline",
    "bench",
    "replay_of",
    "judge",
    "gateway",
    "snapshot",
)
"""The RunSettings fields that are typed sub-models: read by attribute, never by key."""


def _is_nested_settings(node: ast.expr, bound: set[str]) -> bool:
    """``settings.git``, ``(info.settings.baseline or {})``, ``dict(settings.bench)``, or a
    name bound to one of these in the same module."""
    if isinstance(node, ast.Name):
        return node.id in bound
    if isinstance(node, ast.Attribute):
        return node.attr in NESTED_SETTINGS and _is_settings(node.value)
    if isinstance(node, ast.BoolOp):
        return any(_is_nested_settings(value, bound) for value in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        return node.func.id == "dict" and _is_nested_settings(node.args[0], bound)
    return False


def nested_settings_key_reads(src: Path, root: str = ROOT) -> list[str]:
    """Every ``.get("KEY")``, ``["KEY"]`` and ``"KEY" in`` on a nested run setting (see
    :data:`NESTED_SETTINGS`) outside ``seatrial/record/_settings.py``."""
    found = []
    for path in sorted((src / root).rglob("*.py")):
        where = path.relative_to(src).as_posix()
        if where == SETTINGS_OWNER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        bound: set[str] = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and _is_nested_settings(node.value, set())
            ):
                bound.add(node.targets[0].id)
        for node in ast.walk(tree):
            by_key = (
                (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("get", "pop", "setdefault")
                    and _is_nested_settings(node.func.value, bound)
                    and bool(node.args)
                    and _is_text(node.args[0])
                )
                or (
                    isinstance(node, ast.Subscript)
                    and _is_nested_settings(node.value, bound)
                    and _is_text(node.slice)
                )
                or (
                    isinstance(node, ast.Compare)
                    and _is_text(node.left)
                    and isinstance(node.ops[0], ast.In | ast.NotIn)
                    and _is_nested_settings(node.comparators[0], bound)
                )
            )
            if by_key:
                found.append(f"{where}:{getattr(node, 'lineno', 0)}")
    return found


def settings_key_reads(src: Path, root: str = ROOT) -> list[str]:
    """Every ``settings.get("KEY")``, ``settings["KEY"]`` and ``"KEY" in settings`` outside
    ``seatrial/record/_settings.py`` (where :class:`RunSettings` names each key as an attribute)."""
    found = []
    for path in sorted((src / root).rglob("*.py")):
        where = path.relative_to(src).as_posix()
        if where == SETTINGS_OWNER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            by_key = (
                (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("get", "pop", "setdefault")
                    and _is_settings(node.func.value)
                    and bool(node.args)
                    and _is_text(node.args[0])
                )
                or (
                    isinstance(node, ast.Subscript)
                    and _is_settings(node.value)
                    and _is_text(node.slice)
                )
                or (
                    isinstance(node, ast.Compare)
                    and _is_text(node.left)
                    and isinstance(node.ops[0], ast.In | ast.NotIn)
                    and _is_settings(node.comparators[0])
                )
            )
            if by_key:
                found.append(f"{where}:{getattr(node, 'lineno', 0)}")
    return found


def test_no_run_setting_is_read_by_key_outside_the_record():
    reads = settings_key_reads(SRC)
    assert not reads, "read RunSettings attributes (seatrial.record) instead:\n" + "\n".join(
        f"  {line}" for line in reads
    )


@pytest.mark.parametrize(
    "text",
    [
        'def f(info):\n    return info.settings.get("timeout_s", 60.0)\n',
        'def f(settings):\n    return settings.get("gates") or []\n',
        'def f(info):\n    return info.settings["judge"]\n',
        'def f(settings):\n    settings["backend"] = "celery"\n',
        'def f(info):\n    return "judge" in info.settings\n',
        'def f(runs):\n    return runs.c.settings["dataset"]\n',
    ],
    ids=["get-default", "get", "subscript", "store", "in", "sql-path"],
)
def test_a_settings_key_read_by_string_is_found(tmp_path, text):
    src = _package(tmp_path, {"__init__.py": "", "a/_user.py": text})
    (line,) = settings_key_reads(src)
    assert line.startswith("seatrial/a/_user.py:")


def test_attributes_the_owner_and_other_lookups_are_no_settings_key_read(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "record/_settings.py": 'def f(settings):\n    return settings.get("timeout_s")\n',
            "a/_user.py": (
                "from seatrial.record import settings_key\n"
                "def f(info, adapter, runs, options, recorded, name):\n"
                "    info.settings.timeout_s, adapter.settings.tools, options.settings.update({})\n"
                '    recorded.update(backend="celery")\n'
                '    config.get("timeout_s"), recorded["baseline"]\n'
                "    info.settings.get(name)\n"
                '    return runs.c.settings[settings_key("dataset")]\n'
            ),
        },
    )
    assert settings_key_reads(src) == []


def test_no_nested_run_setting_is_read_by_key_outside_the_record():
    reads = nested_settings_key_reads(SRC)
    assert not reads, "read the nested settings' attributes (seatrial.record) instead:\n" + (
        "\n".join(f"  {line}" for line in reads)
    )


def test_the_checked_nested_settings_are_the_typed_sub_models():
    from pydantic import BaseModel

    from seatrial.record import RunSettings

    typed = {
        name
        for name, field in RunSettings.model_fields.items()
        if any(
            isinstance(arg, type) and issubclass(arg, BaseModel)
            for arg in getattr(field.annotation, "__args__", ())
        )
    }
    assert typed == set(NESTED_SETTINGS)


@pytest.mark.parametrize(
    "text",
    [
        'def f(settings):\n    return (settings.baseline or {}).get("run_id")\n',
        'def f(info):\n    git = info.settings.git\n    return git.get("branch")\n',
        'def f(info):\n    bench = info.settings.bench or {}\n    return bench["agent"]\n',
        'def f(info):\n    return info.settings.replay_of["run_id"]\n',
        'def f(info):\n    return "name" in dict(info.settings.dataset)\n',
        'def f(info):\n    return (info.settings.judge or {}).get("model")\n',
        'def f(info):\n    return info.settings.gateway["config_hash"]\n',
        "def f(settings):\n    snapshot = settings.snapshot or {}\n"
        '    return snapshot.get("agent")\n',
    ],
    ids=[
        "get-or-empty",
        "bound-get",
        "bound-subscript",
        "subscript",
        "in-dict",
        "judge",
        "gateway",
        "snapshot",
    ],
)
def test_a_nested_setting_read_by_key_is_found(tmp_path, text):
    src = _package(tmp_path, {"__init__.py": "", "a/_user.py": text})
    (line,) = nested_settings_key_reads(src)
    assert line.startswith("seatrial/a/_user.py:")


def test_nested_attributes_the_owner_and_other_dicts_are_no_nested_key_read(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "record/_settings.py": (
                'def f(settings):\n    return (settings.git or {}).get("branch")\n'
            ),
            "a/_user.py": (
                "def f(info, report, git, config):\n"
                "    info.settings.git.branch, info.settings.baseline.run_id\n"
                '    report.dataset.get("name"), git.get("branch"), config.git["x"]\n'
                '    info.settings.snapshot.gateway.models.get("qwen")  # a model by its name\n'
                '    return info.settings.judge.model, (report.judge or {}).get("model")\n'
            ),
        },
    )
    assert nested_settings_key_reads(src) == []


# One conversation loop runs every live adapter (agent/_turns.py): it numbers the turns and
# writes each turn's event and index. An adapter that wrote its own would number, mark or
# police its turns its own way, as the python, http and model adapters each once did. The
# trace package is not an adapter: it rebuilds recorded and imported conversations.

TURNS_OWNER = Path("seatrial/agent/_turns.py")
TRACE_PACKAGE = Path("seatrial/trace")


def _is_turn_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "TURN"


def turn_writers(src: Path, root: str = ROOT) -> list[str]:
    """``file:line`` of each turn event recorded (``recorder.event(A.TURN, ...)``) or turn
    index set on another object (``recorder.turn_index = i``) outside the loop and trace."""
    found: list[str] = []
    for path in sorted((src / root).rglob("*.py")):
        where = path.relative_to(src)
        if where == TURNS_OWNER or where.is_relative_to(TRACE_PACKAGE):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "event"
                and node.args
                and _is_turn_name(node.args[0])
            ):
                found.append(f"{where}:{node.lineno}: turn event")
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [
                    f"{where}:{node.lineno}: turn index"
                    for target in targets
                    if isinstance(target, ast.Attribute)
                    and target.attr == "turn_index"
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                ]
    return found


def test_only_the_conversation_loop_marks_turns():
    found = turn_writers(SRC)
    assert not found, "answer the turn and let agent/_turns.py:converse mark it:\n" + "\n".join(
        f"  {line}" for line in found
    )


@pytest.mark.parametrize(
    "text",
    [
        "def run(ctx, i, m):\n    ctx.recorder.event(A.TURN, {A.TURN_INDEX: i})\n",
        "def run(recorder, i):\n    recorder.turn_index = i\n",
        "def run(session, i):\n    session.turn_index += 1\n",
    ],
    ids=["event", "recorder-index", "session-index"],
)
def test_an_adapter_marking_its_own_turns_is_found(tmp_path, text):
    src = _package(tmp_path, {"__init__.py": "", "agent/_adapter.py": text})
    (line,) = turn_writers(src)
    assert line.startswith("seatrial/agent/_adapter.py:2:")


def test_the_loop_the_trace_builders_and_own_fields_are_no_second_turn_writer(tmp_path):
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "agent/_turns.py": "def converse(r, i):\n    r.turn_index = i\n    r.event(A.TURN)\n",
            "trace/_import.py": "def build(r):\n    r.event(A.TURN, {})\n",
            "agent/_session.py": "class S:\n    def __init__(self):\n        self.turn_index = 0\n",
            "agent/_other.py": "def f(r):\n    r.event(A.SKILL, {})\n",
        },
    )
    assert turn_writers(src) == []
