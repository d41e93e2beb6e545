"""How Babel finds the CLI's help text: the strings marked in the code, and each command's
docstring, which Typer shows as the command's help (``babel.cfg`` names this extractor for
``seatrial/cli``; ``make catalogs`` runs it, docs/i18n.md).

Used by ``pybabel extract`` only (Babel is a development dependency), never at run time.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any


def extract_help(
    fileobj: IO[bytes],
    keywords: Mapping[str, Any],
    comment_tags: Collection[str],
    options: Mapping[str, Any],
) -> Iterator[tuple[Any, ...]]:
    """Every string Babel's Python extractor finds in ``fileobj``, then the docstring of each
    function registered as a command (``@app.command()``) without a ``help=`` of its own, as
    Typer shows it (``inspect.getdoc``: indentation removed)."""
    from babel.messages.extract import extract_python

    yield from extract_python(fileobj, keywords, comment_tags, options)  # type: ignore[arg-type]
    # then what Babel's extractor cannot see: the docstrings Typer turns into help
    fileobj.seek(0)
    for node in ast.walk(ast.parse(fileobj.read())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_command(node):
            docstring = ast.get_docstring(node, clean=True)
            if docstring:
                yield node.body[0].lineno, None, docstring, []


def _is_command(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function`` is decorated ``@<typer>.command(...)`` with no ``help=``."""
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "command"
        ):
            return all(keyword.arg != "help" for keyword in decorator.keywords)
    return False
