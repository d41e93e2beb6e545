"""Text a person reads is marked for translation where it is written.

The catalogs' test (``test_catalogs.py``) checks that every *marked* string has its Chinese;
this one looks for English that was never marked, in the places a person reads it: the lines
a command prints (``console.print``, ``typer.echo``, ``err_console.rule`` ... in
``seatrial/cli``), the errors that stop a command with a message (``InputError`` and its
kin, ``StoreError``, the trace readers' errors, ``typer.BadParameter``, ``pytest.UsageError``),
the problems found in a file (``Problem(path, line, message, fix)``), and what pydantic's
validators raise, which a suite's or ``seatrial.yaml``'s problem quotes.

English that is written on purpose stays so and says why, with a comment on the line where
the text starts or the line above it: ``# untranslated: <why>`` (a name, a command line, the
text another program reads, an error recorded with an attempt as data).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "seatrial"

RAISED = frozenset(
    {
        "AgentSpecError",
        "BadParameter",
        "BudgetExceeded",
        "ConfigError",
        "InputError",
        "MissingExtra",
        "MissingModel",
        "OtlpFormatError",
        "RunNotFound",
        "StoreError",
        "SuiteError",
        "TraceFormatError",
        "UnknownEmbeddingModel",
        "UsageError",
    }
)
"""Errors whose message a person reads when a command stops (exit 2 or 3)."""

PRINTED = frozenset({"echo", "print", "rule", "secho"})
"""What a command prints with (Rich's console, Typer's echo)."""

VALIDATORS = frozenset({"field_validator", "model_validator", "validator", "root_validator"})

_WORDS = re.compile(r"[A-Za-z]{3,}")
_NOT_PROSE = re.compile(r"\[/?[a-z #0-9]*\]|`[^`]*`|\{[^}]*\}|https?://\S+|--[a-z-]+")
"""Rich markup, code in backticks, placeholders, URLs and option names: not prose."""


def _prose(node: ast.expr) -> str:
    """The English prose a string expression writes as it stands, or ``""``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = _NOT_PROSE.sub(" ", node.value)
        return node.value if _WORDS.search(text) else ""
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
        joined = "".join(str(part) for part in parts)
        return joined if _WORDS.search(_NOT_PROSE.sub(" ", joined)) else ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _prose(node.left) or _prose(node.right)
    return ""


def _name(call: ast.Call) -> str:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else ""


def _said(call: ast.Call, in_cli: bool, in_validator: bool) -> list[ast.expr]:
    """The arguments of ``call`` a person reads, when it is a place they read."""
    name = _name(call)
    keywords = [k.value for k in call.keywords if k.arg in ("message", "fix", "detail")]
    if name == "Problem":
        return call.args[2:4] + keywords
    if name in RAISED or (name == "ValueError" and in_validator):
        return call.args[:1] + keywords
    if in_cli and name in PRINTED and isinstance(call.func, ast.Attribute | ast.Name):
        return call.args[:1]
    return []


class _Finder(ast.NodeVisitor):
    def __init__(self, path: Path, source: Path, lines: list[str]) -> None:
        self.shown = path.relative_to(source.parent).as_posix()
        self.lines = lines
        self.in_cli = "cli" in path.relative_to(source).parts
        self.function = "<module>"
        self.in_validator = False
        self.found: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = (self.function, self.in_validator)
        decorators = {
            _name(d) if isinstance(d, ast.Call) else getattr(d, "id", getattr(d, "attr", ""))
            for d in node.decorator_list
        }
        self.function = node.name
        self.in_validator = bool(decorators & VALIDATORS) or self.in_validator
        self.generic_visit(node)
        self.function, self.in_validator = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        for argument in _said(node, self.in_cli, self.in_validator):
            prose = _prose(argument)
            said_why = self.lines[max(argument.lineno - 2, 0) : argument.lineno]
            if prose and not any("# untranslated:" in line for line in said_why):
                text = " ".join(prose.split())[:60]
                self.found.append(f"{self.shown}:{self.function}:{text}")
        self.generic_visit(node)


def unmarked(source: Path = SOURCE) -> Iterator[str]:
    """Each unmarked English text a person reads, as ``path:function:text``."""
    for path in sorted(source.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        finder = _Finder(path, source, text.splitlines())
        finder.visit(ast.parse(text))
        yield from finder.found


def test_no_english_reaches_a_reader_unmarked() -> None:
    found = list(unmarked())
    assert found == [], (
        "English a person reads, not marked for translation: mark it with _() and give its "
        "Chinese in the .po (docs/i18n.md), or say why it stays English with "
        "`# untranslated: why` on its line or the line above:\n" + "\n".join(found)
    )


def test_the_finder_sees_each_kind_of_unmarked_text(tmp_path: Path) -> None:
    package = tmp_path / "seatrial"
    (package / "cli").mkdir(parents=True)
    (package / "cli" / "_x.py").write_text(
        "def show(console, n):\n"
        "    console.print(f'[red]error:[/] {n} runs were lost')\n"
        "    console.print(_('{n} runs were lost').format(n=n))\n"
        "    console.print(f'  `{n}`')\n"
        "    console.print('internal detail')  # untranslated: for developers\n",
        encoding="utf-8",
    )
    (package / "case.py").write_text(
        "class M:\n"
        "    @field_validator('x')\n"
        "    def _x(cls, v):\n"
        "        raise ValueError(f'{v} is not a number')\n"
        "def load(p):\n"
        "    raise InputError('cannot read the file')\n"
        "def check(x):\n"
        "    raise ValueError('a bug of ours, never a reader')\n"
        "def problem(p):\n"
        "    return Problem(p, 1, _('bad key'), 'remove the key')\n",
        encoding="utf-8",
    )
    found = sorted(unmarked(package))
    assert found == [
        "seatrial/case.py:_x:is not a number",
        "seatrial/case.py:load:cannot read the file",
        "seatrial/case.py:problem:remove the key",
        "seatrial/cli/_x.py:show:[red]error:[/] runs were lost",
    ]
