"""The Typer application and the error boundary every command goes through."""

from __future__ import annotations

import atexit
import contextvars
import copy
import functools
import gc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.rule import Rule
from rich.text import TextType

from seatrial.errors import SeatrialError, SuiteError
from seatrial.i18n import N_, ngettext, set_language
from seatrial.i18n import gettext as _

app = typer.Typer(
    name="seatrial",
    help=N_(
        "Regression-test and evaluate LLM agents: run suites, store trajectories, gate releases."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help is written in paragraphs wrapped in the source; Markdown joins a paragraph's lines
    # and wraps it to the reader's width (Rich mode kept each source line break).
    rich_markup_mode="markdown",
)
cases_app = typer.Typer(
    help=N_("The golden set's cases: which ones stopped telling good agents from bad."),
    no_args_is_help=True,
)
"""``seatrial cases``: ``_cases`` registers it, ``_expand`` and ``_from_trace`` add to it."""

UNWRAPPED_WIDTH = 1_000_000
"""The width output is laid out to when it does not go to a terminal: wide enough that no
line is wrapped and no table column is cut."""

RULE_WIDTH = 80
"""A heading rule's width when output does not go to a terminal (it has no window to fill)."""


class _Console(Console):
    """Rich's console, fitted to the terminal's window; elsewhere (a CI log, a pipe, a file)
    every line is written whole: a report path is not split mid-word, a table column is not
    cut to "pyth…", whatever COLUMNS says (pytest-xdist and some CI runners set it). Whether
    it is a terminal is asked at each print, as Rich does. Help, which Typer writes with a
    console of its own, asks :data:`console` and follows the same rule (``cli/_help.py``)."""

    @property
    def size(self) -> ConsoleDimensions:
        fitted = Console.size.fget(self)  # type: ignore[attr-defined]
        if self.is_terminal:
            return fitted  # type: ignore[no-any-return]
        return ConsoleDimensions(UNWRAPPED_WIDTH, fitted.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def rule(self, title: TextType = "", **kwargs: Any) -> None:
        """A heading rule: the window's width in a terminal, :data:`RULE_WIDTH` elsewhere."""
        if self.is_terminal:
            super().rule(title, **kwargs)
        else:
            self.print(Rule(title, **kwargs), width=RULE_WIDTH)


console = _Console(highlight=False)
err_console = _Console(stderr=True, highlight=False)

F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F) -> F:
    """Turn Seatrial's errors into their documented exit codes with a clear message.

    The command runs in a copy of the context: what it sets in a context variable (the
    reader's language, ``seatrial.i18n.set_language``) ends with it. The reader's language is
    set first from what is known before the project is read (the command's ``lang``, else
    what help reads: ``SEATRIAL_LANG``, ``language:``, the locale), so an error raised before
    the command sets it (``speak_reader_language``) reads in it too; a value that names no
    language is left to the command to refuse.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return contextvars.copy_context().run(_guarded_call, fn, args, kwargs)

    return wrapper  # type: ignore[return-value]


def _guarded_call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` in the reader's language, its errors said and turned into exit
    codes (run inside the command's own copy of the context)."""
    _speak_early(kwargs.get("lang"))
    try:
        return fn(*args, **kwargs)
    except SuiteError as exc:
        count = len(exc.problems)
        heading = ngettext(
            "[red]invalid input ({count} problem):[/]",
            "[red]invalid input ({count} problems):[/]",
            count,
        )
        err_console.print(heading.format(count=count))
        for problem in exc.problems:
            err_console.print(f"  {problem.said(_)}", markup=False)
        raise typer.Exit(exc.exit_code) from None
    except SeatrialError as exc:
        err_console.print(
            _("[red]error:[/] {error}").format(error=escape(str(exc))), highlight=False
        )
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print(_("[yellow]interrupted[/]"))
        raise typer.Exit(130) from None
    except typer.Exit:
        raise
    except Exception as exc:  # Seatrial's own bug: exit 3, say so
        failed = _("[red]Seatrial itself failed:[/] {error}").format(
            error=escape(f"{type(exc).__name__}: {exc}")
        )
        bug = _("This is a bug in Seatrial; please report it with the command you ran.")
        err_console.print(f"{failed}\n{escape(bug)}", highlight=False)
        raise typer.Exit(3) from None


def _speak_early(option: object) -> None:
    """Set the reader's language from what is known before the project is read: ``--lang``
    (``option``), else what help reads (``SEATRIAL_LANG``, ``language:``, the locale)."""
    from seatrial.cli._help import early_language  # _help imports this module

    set_language(early_language(option if isinstance(option, str) else None))


COMMAND_GC_THRESHOLD = 50_000
"""Gen-0 threshold of Python's garbage collector while a ``seatrial`` command runs."""


@contextmanager
def command_gc() -> Iterator[None]:
    """The garbage collector set for a command, put back when it ends.

    What was imported to start the command (Typer, Rich, pydantic's schemas: several hundred
    thousand objects) lives as long as the process, yet every full collection walked it
    again: on a 1,000-case ``seatrial run`` about 7% of the command's instructions, half the
    time of loading the suite (docs/performance.md, "Starting the command"). So it is frozen
    out of collections (``gc.freeze``), and collections come rarer, as while a run executes
    (``seatrial.run``'s own threshold).
    """
    before = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0  # what a caller froze is theirs to unfreeze
    if freezing:
        gc.freeze()
    gc.set_threshold(COMMAND_GC_THRESHOLD, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if freezing:
            gc.unfreeze()


def main() -> None:
    """Run the ``seatrial`` command in this process, its arguments taken from ``sys.argv``;
    it ends by raising ``SystemExit`` with the command's exit code."""
    with command_gc():
        app_for(sys.argv[1:])(prog_name="seatrial")


def app_for(args: list[str]) -> typer.Typer:
    """The application that runs ``seatrial ARGS``: :data:`app` with only the command that
    ``args`` names, when they name one of its own commands; else :data:`app` itself.

    Typer turns every registered command into a Click command, evaluating each parameter's
    annotations, before it parses the first argument: for the 47 commands, about a tenth of
    the CPU ``seatrial validate`` starts in (docs/performance.md, "Starting the command").
    A command parses, runs and prints its help the same alone; ``seatrial --help``, a group
    (``seatrial cases ...``), an option first and a mistyped name (whose error suggests the
    nearest command) get the whole application.
    """
    if not args or args[0].startswith("-"):
        return app
    for command in app.registered_commands:
        name = command.name or typer.main.get_command_name(command.callback.__name__)  # type: ignore[union-attr]
        if name == args[0]:
            alone = copy.copy(app)
            alone.registered_commands = [command]
            alone.registered_groups = []
            return alone
    return app


def console_script() -> NoReturn:
    """The ``seatrial`` console script: :func:`main`, then the process ends without taking
    its interpreter apart.

    A command's process ends when the command does, yet the interpreter's own exit tore
    down every module and object the command had loaded, one at a time: about 0.2-0.3 s of
    CPU after a 1,000-case ``seatrial run`` had written its reports (docs/performance.md,
    "Starting the command"). What the exit would do for the program is done first, in the
    same order: other threads that are not daemons are waited for, ``atexit`` handlers run
    (logging's flush, ``weakref.finalize`` callbacks, multiprocessing's joins), standard
    output and error are flushed; then the process exits with the command's code. An
    exception other than ``SystemExit`` ends the process the usual way, traceback included.
    """
    try:
        main()
    except SystemExit as stop:
        code = _exit_status(stop.code)
    else:
        code = 0
    # The interpreter's own first steps, in its order: threading's exit hooks (which stop
    # idle executor workers) and the wait for threads that are not daemons, then atexit.
    shutdown: Callable[[], None] | None = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    else:  # an interpreter without it: wait for the threads
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe (`seatrial ... | head`), a closed stream
            code = code or 120  # what the interpreter exits with when its flush fails
    os._exit(code)


def _exit_status(code: object) -> int:
    """The process status ``SystemExit(code)`` ends with, as the interpreter reads it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
