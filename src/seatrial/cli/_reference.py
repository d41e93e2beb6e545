"""The CLI reference (docs/cli.md), generated from the real command tree.

Regenerate with ``python -m seatrial.cli._reference > docs/cli.md``; a test fails when the
file and the CLI disagree.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer

from seatrial.cli._app import app

HEADER = """\
# Command-line reference

Generated from the `seatrial` command itself (`python -m seatrial.cli._reference >
docs/cli.md`); a test fails when this page and the command disagree. Exit codes are in
[running.md](running.md#exit-codes).
"""


def _param_line(param: Any) -> str:
    # Typer vendors its own click: read parameters by their attributes, not their classes.
    if param.param_type_name == "argument":
        name = f"`{param.metavar or param.name.upper()}`"
        kind = "argument" + ("" if param.required else ", optional")
        if param.nargs == -1:
            kind += ", repeatable"
    else:
        name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        kind = "flag" if param.is_flag else "option"
        if param.multiple:
            kind += ", repeatable"
        if param.default not in (None, False, ()) and not callable(param.default):
            kind += f", default `{param.default}`"
    # A `|` in help text ("pass|fail") would split the Markdown table cell.
    help_text = " ".join((getattr(param, "help", None) or "").split()).replace("|", "\\|")
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


def render_reference() -> str:
    """Markdown for every command, its arguments and options."""
    group: Any = typer.main.get_command(app)
    parts = [HEADER]
    # `seatrial` itself takes options before any command (`seatrial --version`).
    own = [p for p in group.params if p.name != "help"]
    if own:
        parts.append("## `seatrial`\n")
        parts.append("```\nseatrial [OPTIONS] COMMAND [ARGS]...\n```\n")
        parts.append(inspect.cleandoc(group.help or "") + "\n")
        parts.append("| name | kind | meaning |\n|---|---|---|")
        parts.append("\n".join(_param_line(p) for p in own) + "\n")
    for name, command in _commands(group, ""):
        usage = " ".join(command.collect_usage_pieces(typer.Context(command)))
        parts.append(f"## `seatrial {name}`\n")
        parts.append(f"```\nseatrial {name} {usage}\n```\n")
        parts.append(inspect.cleandoc(command.help or "") + "\n")
        params = [p for p in command.params if p.name != "help"]
        if params:
            parts.append("| name | kind | meaning |\n|---|---|---|")
            parts.append("\n".join(_param_line(p) for p in params) + "\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(render_reference(), end="")
