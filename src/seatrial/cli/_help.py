"""The commands' help, shown in the reader's language and, off a terminal, with whole lines.

Every help text (a command's docstring, an option's or argument's ``help=``, a group's
``help=``) is written in English and marked for the catalogs: ``help=N_("...")``, and a
command's docstring, which Babel reads through ``seatrial.i18n._extract`` (``babel.cfg``).
Nothing is translated when the commands are defined: :class:`HelpCommand` and
:class:`HelpGroup`, the classes every command and group is built with (:func:`help_for_every`),
translate their own texts, their parameters' and their sub-commands' one-liners while their
help is written, then put the English back.

``--lang`` is parsed after ``--help`` has been answered, so help reads the rest of the choice
(docs/i18n.md): ``SEATRIAL_LANG``, ``language:`` in the ``seatrial.yaml`` of the current folder or
the nearest parent, the locale. Help is always shown: a value that names no language Seatrial
speaks gives English help here, and the command itself says what is wrong with it.

Off a terminal (a pipe, a CI log, a file) help is laid out as wide as its longest line needs,
so no line is wrapped, whatever ``COLUMNS`` says, as the commands' own output is
(``_app._Console``); in a terminal it fits the window.

Typer offers no hook for either: its renderer (``typer.rich_utils``) reads its words
(``Options``, ``[default: 8]``), its Markdown class and its width from module constants when it
writes, so these are set for the time help is written and put back after it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import typer
from rich.cells import cell_len
from typer._click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup

from seatrial.cli._app import console
from seatrial.config import find_config
from seatrial.i18n import (
    LANGUAGE_ENV,
    N_,
    Language,
    gettext,
    language_of,
    locale_language,
    use_language,
)

_LANGUAGE_KEY = re.compile(r"""^language:[ \t]*["']?([A-Za-z_.@-]+)""", re.MULTILINE)
"""A top-level ``language: zh`` line of ``seatrial.yaml``."""

HELP_OPTION = N_("Show this message and exit.")
"""Click's own ``--help`` option's help, marked here so that it has its Chinese."""

USAGE = N_("Usage: ")
"""What the usage line starts with (Click's own words, translated here)."""

_TYPER_WORDS = (
    "ARGUMENTS_PANEL_TITLE",
    "OPTIONS_PANEL_TITLE",
    "COMMANDS_PANEL_TITLE",
    "DEFAULT_STRING",
    "REQUIRED_LONG_STRING",
    "DEPRECATED_STRING",
    "ENVVAR_STRING",
)
"""The words Typer's help renderer writes around ours: its panels' titles, ``[default: 8]``,
``[required]``. They are module constants of ``typer.rich_utils``, read as help is written."""

TYPER_WORDS = (
    N_("Arguments"),
    N_("Options"),
    N_("Commands"),
    N_("[default: {}]"),
    N_("[required]"),
    N_("(deprecated) "),
    N_("[env var: {}]"),
)
"""Their English, in the order of ``_TYPER_WORDS``, marked for the catalogs."""

_FILLED: dict[str, tuple[str, Mapping[str, str]]] = {}
"""Help texts with values filled in (:func:`filled`): the English shown, and what made it."""

FIRST_WIDTH = 1_000
"""The width help is first laid out to off a terminal, to find how wide its lines are: wide
enough for any help we write, narrow enough to lay out fast (Rich fills every line of a panel
to the width). Help that fills more than half of it is laid out again, four times as wide."""

NARROWEST = 80
"""Help off a terminal is never narrower than this (its panels keep their usual shape)."""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BORDER = " │╮╯─"


def filled(message: str, **fields: str) -> str:
    """``message`` (marked with ``N_`` where it is written) with its ``{fields}`` filled in:
    for help that names values kept elsewhere (the trace formats). Help in another language
    fills the same fields into the translated message."""
    text = message.format(**fields)
    _FILLED[text] = (message, fields)
    return text


def translated(text: str) -> str:
    """Help ``text`` in the reader's language (itself in English)."""
    made = _FILLED.get(text)
    if made is not None:
        message, fields = made
        return gettext(message).format(**fields)
    return gettext(text)


def help_language(environ: Mapping[str, str] | None = None, start: Path | None = None) -> Language:
    """The language help is shown in: ``SEATRIAL_LANG``, else the project's ``language:``
    (``seatrial.yaml`` in ``start``, the current folder, or its nearest parent holding one),
    else the locale; English when the one that decides names no language we speak."""
    environ = os.environ if environ is None else environ
    variable = environ.get(LANGUAGE_ENV)
    if variable:
        return language_of(variable) or "en"
    configured = configured_language(Path.cwd() if start is None else start)
    if configured is not None:
        return language_of(configured) or "en"
    return locale_language(environ)


def configured_language(start: Path) -> str | None:
    """``language:`` as written in the nearest ``seatrial.yaml``; None without one. Read with
    one pattern, not the project's settings, for commands that must start light (help,
    ``seatrial validate``)."""
    try:
        file = find_config(start)
        if file is None:
            return None
        found = _LANGUAGE_KEY.search(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):  # an unreadable file: the command will say so
        return None
    return found.group(1) if found else None


def early_language(option: str | None) -> Language:
    """The reader's language before a command has read its project: ``--lang`` (``option``)
    when it names a language Seatrial speaks, else the language help is shown in. A value that
    names none is the command's to refuse."""
    chosen = language_of(option) if option else None
    return chosen or help_language()


@contextlib.contextmanager
def _in_language(command: Any, ctx: Any, language: Language) -> Iterator[None]:
    """``command``'s help texts, its parameters' and its sub-commands' in ``language`` inside
    the block; the English put back after it."""
    from typer import rich_utils

    changed: list[tuple[Any, str, Any]] = []

    def translate(owner: Any, name: str) -> None:
        value = getattr(owner, name, None)
        if isinstance(value, str) and value:
            changed.append((owner, name, value))
            setattr(owner, name, translated(value))

    with use_language(language):
        for name in ("help", "short_help", "epilog"):
            translate(command, name)
        for param in command.get_params(ctx):
            translate(param, "help")
        for sub in getattr(command, "commands", {}).values():
            translate(sub, "help")
            translate(sub, "short_help")
        for constant, english in zip(_TYPER_WORDS, TYPER_WORDS, strict=True):
            changed.append((rich_utils, constant, getattr(rich_utils, constant)))
            setattr(rich_utils, constant, gettext(english))
        changed.append((rich_utils, "Markdown", getattr(rich_utils, "Markdown")))  # noqa: B009
        setattr(rich_utils, "Markdown", _folding_markdown())  # noqa: B010
        try:
            yield
        finally:
            for owner, name, value in reversed(changed):
                setattr(owner, name, value)


def _folding_markdown() -> type[Any]:
    """Rich's Markdown, folding a run of text too long for its line onto the next one.

    Rich breaks lines at spaces only; Chinese writes none between words, so a sentence is one
    run, which a table's column (Rich ends it with "…" there) would cut short in a terminal.
    """
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.markdown import Markdown

    class FoldingMarkdown(Markdown):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            return super().__rich_console__(console, options.update(overflow="fold"))

    return FoldingMarkdown


@contextlib.contextmanager
def _laid_out_to(width: int | None) -> Iterator[None]:
    """Typer's help console laid out to ``width`` columns inside the block (None: the
    window's)."""
    from typer import rich_utils

    before = rich_utils.MAX_WIDTH
    rich_utils.MAX_WIDTH = width
    try:
        yield
    finally:
        rich_utils.MAX_WIDTH = before


def _needed_width(text: str) -> int:
    """How many columns the widest line of ``text`` (help laid out wide) needs:
    its content, without the padding and panel border that fill it to the right."""
    widest = 0
    for line in _ANSI.sub("", text).splitlines():
        content = line.rstrip(_BORDER)
        if not content:
            continue
        # A panel's row ends with a space and its border; other lines with one space of
        # padding (Typer pads its usage line and the command's help on both sides).
        border = 2 if content != line.rstrip(" ") else 1
        widest = max(widest, cell_len(content) + border)
    return widest


def _write_help(command: Any, ctx: Any, formatter: Any, write: Any) -> None:
    """Write ``command``'s help with ``write`` (Typer's renderer), in the reader's language
    and, off a terminal, with every line whole."""
    language = help_language()
    with contextlib.ExitStack() as stack:
        if language != "en":
            stack.enter_context(_in_language(command, ctx, language))
        if console.is_terminal:
            write(ctx, formatter)
            return
        width = FIRST_WIDTH
        while True:
            first = io.StringIO()
            with _laid_out_to(width), contextlib.redirect_stdout(first):
                write(ctx, formatter)
            needed = _needed_width(first.getvalue())
            if needed * 2 <= width:
                break
            width *= 4  # a line that wide may have been wrapped: lay it out wider
        with _laid_out_to(max(NARROWEST, needed)):
            write(ctx, formatter)


_REPORTING: ContextVar[tuple[Sequence[str], contextlib.ExitStack] | None] = ContextVar(
    "seatrial_usage_reporting", default=None
)
"""While a command line is parsed (:meth:`_SaysUsageErrors.main`): its words, and what puts
Typer's words back after a usage error was printed in the reader's language."""


class _SaysUsageErrors:
    """A command or group whose parser's errors (an unknown option, a bad value, a missing
    argument, an unknown command) read in the reader's language (``cli/_usage.py``, imported
    only when there is one to say)."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **extra: Any) -> Any:
        """Run the command line (Typer's ``main``), its usage errors said in the reader's
        language."""
        if _REPORTING.get() is not None:  # a command line run inside another (a test's)
            return super().main(args, *rest, **extra)  # type: ignore[misc]
        words = sys.argv[1:] if args is None else list(args)
        with contextlib.ExitStack() as put_back:
            token = _REPORTING.set((words, put_back))
            try:
                return super().main(args, *rest, **extra)  # type: ignore[misc]
            finally:
                _REPORTING.reset(token)

    def make_context(self, *args: Any, **extra: Any) -> Any:
        """Typer's context, its parser's error said in the reader's language."""
        try:
            return super().make_context(*args, **extra)  # type: ignore[misc]
        except UsageError as error:
            _say_usage_error(error)
            raise

    def invoke(self, ctx: Any) -> Any:
        """Typer's invocation (a group finds its command there), its usage error said in the
        reader's language."""
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except UsageError as error:
            _say_usage_error(error)
            raise


def _say_usage_error(error: UsageError) -> None:
    """``error`` said in the reader's language, once (it passes every level it was raised
    under); help's own page (``no_args_is_help``) is not an error to say."""
    if getattr(error, "_seatrial_said", False) or type(error).__name__ == "NoArgsIsHelpError":
        return
    error._seatrial_said = True  # type: ignore[attr-defined]
    from seatrial.cli import _usage

    reporting = _REPORTING.get()
    words, put_back = reporting if reporting is not None else (sys.argv[1:], None)
    _usage.said_in(error, _usage.reader_language(words), put_back)


class HelpCommand(_SaysUsageErrors, TyperCommand):
    """A command whose help reads in the reader's language, its lines whole off a terminal."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Write the help (Typer's layout) in the reader's language."""
        _write_help(self, ctx, formatter, super().format_help)

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        """The usage line, ``Usage:`` in the reader's language."""
        pieces = self.collect_usage_pieces(ctx)
        formatter.write_usage(ctx.command_path, " ".join(pieces), prefix=gettext(USAGE))


class HelpGroup(_SaysUsageErrors, TyperGroup):
    """A group whose help lists its commands in the reader's language."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Write the help (Typer's layout) in the reader's language."""
        _write_help(self, ctx, formatter, super().format_help)

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        """The usage line, ``Usage:`` in the reader's language."""
        pieces = self.collect_usage_pieces(ctx)
        formatter.write_usage(ctx.command_path, " ".join(pieces), prefix=gettext(USAGE))


def help_for_every(app: typer.Typer) -> None:
    """Build every command and group of ``app`` (``app`` itself included) with
    :class:`HelpCommand` and :class:`HelpGroup`, unless one asks for a class of its own."""
    if _typers_own(app.info.cls, TyperGroup):
        app.info.cls = HelpGroup
    for command in app.registered_commands:
        if _typers_own(command.cls, TyperCommand):
            command.cls = HelpCommand
    for group in app.registered_groups:
        if _typers_own(group.cls, TyperGroup):
            group.cls = HelpGroup
        if group.typer_instance is not None:
            help_for_every(group.typer_instance)


def _typers_own(cls: object, default: type) -> bool:
    """Whether ``cls`` is what Typer chose, not a class a command asked for: its default
    class, or its placeholder for a class not given."""
    return cls is None or cls is default or not isinstance(cls, type)
