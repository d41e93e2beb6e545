"""The CLI reference (docs/cli.md, and in Chinese docs/zh/cli.md), generated from the real
command tree.

Regenerate with ``python -m seatrial.cli._reference > docs/cli.md`` and
``python -m seatrial.cli._reference --lang zh > docs/zh/cli.md``; a test fails when a file and
the CLI disagree. The Chinese page reads the help's own translations (``cli/_help.py``).
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

import typer

from seatrial.cli._app import app
from seatrial.cli._help import translated
from seatrial.i18n import N_, Language, gettext, parse_language, pgettext, use_language

HEADER = N_(
    """\
# Command-line reference

Generated from the `seatrial` command itself (`python -m seatrial.cli._reference >
docs/cli.md`); a test fails when this page and the command disagree. Exit codes are in
[running.md](running.md#exit-codes).
"""
)
"""The English page's opening (the Chinese page's is its translation)."""


def _param_line(param: Any) -> str:
    # Typer vendors its own click: read parameters by their attributes, not their classes.
    if param.param_type_name == "argument":
        name = f"`{param.metavar or param.name.upper()}`"
        kinds = [pgettext("cli reference", "argument")]
        if not param.required:
            kinds.append(pgettext("cli reference", "optional"))
        if param.nargs == -1:
            kinds.append(pgettext("cli reference", "repeatable"))
    else:
        name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        flag = pgettext("cli reference", "flag")
        kinds = [flag if param.is_flag else pgettext("cli reference", "option")]
        if param.multiple:
            kinds.append(pgettext("cli reference", "repeatable"))
        if param.default not in (None, False, ()) and not callable(param.default):
            kinds.append(pgettext("cli reference", "default `{value}`").format(value=param.default))
    kind = pgettext("cli reference", ", ").join(kinds)
    # A `|` in help text ("pass|fail") would split the Markdown table cell.
    help_text = translated(getattr(param, "help", None) or "")
    help_text = " ".join(help_text.split()).replace("|", "\\|")
    return f"| {name} | {kind} | {help_text} |"


def _commands(group: Any, prefix: str) -> list[tuple[str, Any]]:
    """Every visible command, sub-commands of a group (``gateway serve``) included."""
    found = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        if hasattr(command, "commands"):
            found += _commands(command, f"{prefix}{name} ")
        else:
            found.append((f"{prefix}{name}", command))
    return found


def render_reference(language: Language = "en") -> str:
    """Markdown for every command, its arguments and options, in ``language``."""
    with use_language(language):
        return _render(typer.main.get_command(app))


def _render(group: Any) -> str:
    table_head = gettext("| name | kind | meaning |") + "\n|---|---|---|"
    parts = [gettext(HEADER)]
    # `seatrial` itself takes options before any command (`seatrial --version`).
    own = [p for p in group.params if p.name != "help"]
    if own:
        parts.append("## `seatrial`\n")
        parts.append("```\nseatrial [OPTIONS] COMMAND [ARGS]...\n```\n")
        parts.append(inspect.cleandoc(translated(group.help or "")) + "\n")
        parts.append(table_head)
        parts.append("\n".join(_param_line(p) for p in own) + "\n")
    for name, command in _commands(group, ""):
        usage = " ".join(command.collect_usage_pieces(typer.Context(command)))
        parts.append(f"## `seatrial {name}`\n")
        parts.append(f"```\nseatrial {name} {usage}\n```\n")
        parts.append(inspect.cleandoc(translated(command.help or "")) + "\n")
        params = [p for p in command.params if p.name != "help"]
        if params:
            parts.append(table_head)
            parts.append("\n".join(_param_line(p) for p in params) + "\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    """Print the reference: English, or the language ``--lang`` names."""
    parser = argparse.ArgumentParser(prog="python -m seatrial.cli._reference")
    parser.add_argument("--lang", default="en", help="en or zh")
    language = parse_language(parser.parse_args(argv).lang, "--lang")
    print(render_reference(language), end="")


if __name__ == "__main__":
    main()
