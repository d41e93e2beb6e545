"""The errors the command line's parser gives before a command runs, in the reader's language.

Typer's parser (its copy of Click, ``typer._click``) writes its errors in English, as plain
strings: ``No such option: --bogus``, ``Invalid value for '--repeats': ...``. Each is
rewritten here from its class and attributes when the reader reads another language, and the
words Typer writes around it (``Usage:``, ``Try 'seatrial run --help' for help.``, the
``Error`` panel's title) are set in that language while Typer prints it. The value's own
complaint is translated where it has a fixed form (what Typer's coercion and Pydantic say of
a number out of range, a word that is no number, a missing file); any other is quoted as
written. English is left exactly as Typer writes it.

The command has not set the reader's language yet: it is what help reads
(``_help.help_language``: ``SEATRIAL_LANG``, ``language:`` in ``seatrial.yaml``, the locale),
unless the command line gives ``--lang VALUE`` (or ``--lang=VALUE``) naming a language
Seatrial speaks. This module is imported only when such an error is reported
(``_help.HelpCommand``), never to start a command.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from typing import IO, Any

from seatrial.cli._help import early_language
from seatrial.i18n import N_, Language, pgettext, use_language
from seatrial.i18n import gettext as _

ERRORS_PANEL_TITLE = N_("Error")
"""The title of the panel Typer writes the error in (``typer.rich_utils``)."""

RICH_HELP = N_("Try [blue]'{command_path} {help_option}'[/] for help.")
"""The line under the usage line that points to the command's help (``typer.rich_utils``)."""

TRY_HELP = N_("Try '{command} {option}' for help.")
"""The same line where Typer writes without Rich (``TYPER_USE_RICH=0``)."""

ERROR_LINE = N_("Error: {message}")
"""How the error is written without Rich."""


def reader_language(words: Sequence[str]) -> Language:
    """The language the error is said in: the last ``--lang`` in ``words`` (the command line,
    as Typer takes a repeated option), when it names one Seatrial speaks, else the language
    help is shown in (``_help.early_language``)."""
    given: str | None = None
    for index, word in enumerate(words):
        if word == "--":
            break
        if word == "--lang" and index + 1 < len(words):
            given = words[index + 1]
        elif word.startswith("--lang="):
            given = word.partition("=")[2]
    return early_language(given)


def said_in(error: Any, language: Language, put_back: contextlib.ExitStack | None) -> None:
    """Have ``error`` (a ``UsageError`` of Typer's parser) say itself in ``language``, and,
    while ``put_back`` is open, Typer's words around it; nothing changes for English."""
    if language == "en":
        return
    with use_language(language):
        message = _message(error)
    error.format_message = lambda: message  # what Typer prints in its panel and after Error:
    error.show = lambda file=None: _show(error, message, language, file)
    if put_back is None:
        return
    put_back.enter_context(use_language(language))  # the usage line (HelpCommand.format_usage)
    from typer import rich_utils

    for name, english in (("ERRORS_PANEL_TITLE", ERRORS_PANEL_TITLE), ("RICH_HELP", RICH_HELP)):
        before = getattr(rich_utils, name)
        put_back.callback(setattr, rich_utils, name, before)
        with use_language(language):
            setattr(rich_utils, name, _(english))


def _show(error: Any, message: str, language: Language, file: IO[Any] | None) -> None:
    """Typer's own ``UsageError.show`` (its output without Rich), in ``language``."""
    from typer._click.utils import echo

    with use_language(language):
        ctx = error.ctx
        if ctx is not None:
            hint = ""
            if ctx.command.get_help_option(ctx) is not None:
                hint = _(TRY_HELP).format(command=ctx.command_path, option=ctx.help_option_names[0])
                hint += "\n"
            echo(f"{ctx.get_usage()}\n{hint}", file=file, color=ctx.color, err=file is None)
        echo(_(ERROR_LINE).format(message=message), file=file, err=file is None)


def _message(error: Any) -> str:
    """What ``error`` says, in the language now set."""
    name = type(error).__name__
    if name == "MissingParameter":
        return _missing(error)
    if name == "BadParameter":
        return _invalid(error)
    if name == "NoSuchOption":
        return _no_such_option(error)
    return _phrase(str(error.message), _USAGE_PHRASES)


def _hint(error: Any) -> str | None:
    """The parameter ``error`` is about, as Typer names it (``'--repeats'``, ``'SUITE'``)."""
    hint: object = error.param_hint
    if hint is None and error.param is not None:
        hint = error.param.get_error_hint()
    if hint is None or isinstance(hint, str):
        return hint
    return " / ".join(repr(one) for one in hint)  # type: ignore[attr-defined]


def _invalid(error: Any) -> str:
    """``Invalid value for '--repeats': ...``."""
    hint = _hint(error)
    complaint = _phrase(str(error.message), _VALUE_PHRASES)
    if hint is None:
        return _("Invalid value: {complaint}").format(complaint=complaint)
    return _("Invalid value for {parameter}: {complaint}").format(
        parameter=hint, complaint=complaint
    )


def _missing(error: Any) -> str:
    """``Missing argument 'SUITE'.``, ``Missing option '--agent'.``"""
    hint = _hint(error)
    kind = error.param_type
    if kind is None and error.param is not None:
        kind = error.param.param_type_name
    said = str(error.message)
    if error.param is not None:
        extra = error.param.get_missing_message(ctx=error.ctx)
        if extra:
            choices = _CHOICES.match(extra)
            if choices:
                extra = _("Choose from:") + choices.group(1)
            said = f"{said}. {extra}" if said else extra
    if kind == "argument":
        missing = _("Missing argument {name}.") if hint else _("Missing argument.")
    elif kind == "option":
        missing = _("Missing option {name}.") if hint else _("Missing option.")
    else:
        missing = _("Missing parameter {name}.") if hint else _("Missing parameter.")
    missing = missing.format(name=hint)
    return f"{missing} {said}" if said else missing


_CHOICES = re.compile(r"^Choose from:(\n.*)$", re.DOTALL)


def _no_such_option(error: Any) -> str:
    """``No such option: --bogus``, with Typer's nearest options."""
    said = _phrase(str(error.message), _USAGE_PHRASES)
    if not error.possibilities:
        return said
    nearest = pgettext("list separator", ", ").join(sorted(error.possibilities))
    return _("{error} (Possible options: {options})").format(error=said, options=nearest)


def _phrase(text: str, phrases: Sequence[tuple[re.Pattern[str], Callable[..., str]]]) -> str:
    """``text`` in the language now set when it has one of ``phrases``' fixed forms, else as
    written."""
    for pattern, say in phrases:
        found = pattern.fullmatch(text)
        if found:
            return say(**found.groupdict())
    return text


def _no_such_command(name: str, nearest: str | None) -> str:
    if nearest is None:
        return _("No such command {name}.").format(name=name)
    return _("No such command {name}. Did you mean {commands}?").format(
        name=name, commands=_listed(nearest)
    )


def _listed(names: str) -> str:
    """``'a', 'b'`` (names quoted and listed by Typer) listed in the language now set."""
    quoted = re.findall(r"'(?:[^'\\]|\\.)*'", names)
    if ", ".join(quoted) != names:
        return names
    return pgettext("list separator", ", ").join(quoted)


def _requires(option: str, count: str | None) -> str:
    if count is None:
        return _("Option {option} requires an argument.").format(option=option)
    return _("Option {option} requires {count} arguments.").format(option=option, count=count)


_USAGE_PHRASES: tuple[tuple[re.Pattern[str], Callable[..., str]], ...] = (
    (
        re.compile(r"No such command (?P<name>.+?)\.(?: Did you mean (?P<nearest>.+)\?)?"),
        _no_such_command,
    ),
    (
        re.compile(r"No such option: (?P<option>.+)"),
        lambda option: _("No such option: {option}").format(option=option),
    ),
    (
        re.compile(r"Got unexpected extra argument\(s\) \((?P<words>.*)\)", re.DOTALL),
        lambda words: _("Got unexpected extra argument(s) ({words})").format(words=words),
    ),
    (
        re.compile(r"Option (?P<option>.+) requires (?:an argument|(?P<count>\d+) arguments)\."),
        _requires,
    ),
    (
        re.compile(r"Option (?P<option>.+) does not take a value\."),
        lambda option: _("Option {option} does not take a value.").format(option=option),
    ),
    (
        re.compile(r"Argument (?P<argument>.+) takes (?P<count>\d+) values\."),
        lambda argument, count: _("Argument {argument} takes {count} values.").format(
            argument=argument, count=count
        ),
    ),
    (re.compile(r"Missing command\."), lambda: _("Missing command.")),
)
"""The fixed forms of Typer's parser's own usage errors (``typer/_click/parser.py``,
``core.py``; ``typer/core.py`` adds the nearest commands)."""


def _is(message: str) -> Callable[..., str]:
    """A phrase with no value in it: ``message`` (marked where it is given) translated."""
    return lambda: _(message)


def _one_of(expected: str) -> str:
    """Pydantic's ``Input should be 'a', 'b' or 'c'``: the choices listed in Chinese style."""
    choices = re.findall(r"'(?:[^'\\]|\\.)*'", expected)
    listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else ""
    if len(choices) > 1 and listed == expected:
        expected = _("{choices} or {last}").format(
            choices=pgettext("list separator", ", ").join(choices[:-1]), last=choices[-1]
        )
    return _("Input should be {expected}").format(expected=expected)


_VALUE_PHRASES: tuple[tuple[re.Pattern[str], Callable[..., str]], ...] = (
    (
        re.compile(r"Input should be greater than or equal to (?P<bound>\S+)"),
        lambda bound: _("Input should be greater than or equal to {bound}").format(bound=bound),
    ),
    (
        re.compile(r"Input should be less than or equal to (?P<bound>\S+)"),
        lambda bound: _("Input should be less than or equal to {bound}").format(bound=bound),
    ),
    (
        re.compile(r"Input should be greater than (?P<bound>\S+)"),
        lambda bound: _("Input should be greater than {bound}").format(bound=bound),
    ),
    (
        re.compile(r"Input should be less than (?P<bound>\S+)"),
        lambda bound: _("Input should be less than {bound}").format(bound=bound),
    ),
    (
        re.compile(r"Input should be a valid integer, unable to parse string as an integer"),
        _is(N_("Input should be a valid integer, unable to parse string as an integer")),
    ),
    (
        re.compile(r"Input should be a valid integer, got a number with a fractional part"),
        _is(N_("Input should be a valid integer, got a number with a fractional part")),
    ),
    (re.compile(r"Input should be a valid integer"), _is(N_("Input should be a valid integer"))),
    (
        re.compile(r"Input should be a valid number(?:, unable to parse string as a number)?"),
        _is(N_("Input should be a valid number")),
    ),
    (re.compile(r"Input should be a finite number"), _is(N_("Input should be a finite number"))),
    (
        re.compile(r"Input should be a valid boolean(?:, unable to interpret input)?"),
        _is(N_("Input should be a valid boolean")),
    ),
    (re.compile(r"Input should be (?P<expected>'.*')"), _one_of),
    (
        re.compile(r"Value error, (?P<value>.+) is not one of (?P<choices>.+)\."),
        lambda value, choices: _("{value} is not one of {choices}.").format(
            value=value, choices=choices
        ),
    ),
    (
        re.compile(r"(?P<kind>File|Directory|Path) (?P<path>'.*') does not exist\."),
        lambda kind, path: _("{kind} {path} does not exist.").format(
            kind=_path_kind(kind), path=path
        ),
    ),
    (
        re.compile(r"(?P<kind>File|Directory|Path) (?P<path>'.*') is a file\."),
        lambda kind, path: _("{kind} {path} is a file.").format(kind=_path_kind(kind), path=path),
    ),
    (
        re.compile(r"(?P<kind>File|Directory|Path) (?P<path>'.*') is a directory\."),
        lambda kind, path: _("{kind} {path} is a directory.").format(
            kind=_path_kind(kind), path=path
        ),
    ),
    (
        re.compile(r"(?P<kind>File|Directory|Path) (?P<path>'.*') is not readable\."),
        lambda kind, path: _("{kind} {path} is not readable.").format(
            kind=_path_kind(kind), path=path
        ),
    ),
    (
        re.compile(r"(?P<kind>File|Directory|Path) (?P<path>'.*') is not writable\."),
        lambda kind, path: _("{kind} {path} is not writable.").format(
            kind=_path_kind(kind), path=path
        ),
    ),
    (
        re.compile(r"Value (?P<value>.+) is not a valid (?P<kind>\w+)\."),
        lambda value, kind: _("Value {value} is not a valid {kind}.").format(
            value=value, kind=kind
        ),
    ),
)
"""The fixed forms of what a value's conversion says (Pydantic's messages through
``typer/_coercion.py``, the paths' checks of ``typer/_param_types.py``)."""


def _path_kind(kind: str) -> str:
    """``File``, ``Directory`` or ``Path`` (Typer's labels for a path parameter)."""
    if kind == "File":
        return _("File")
    if kind == "Directory":
        return _("Directory")
    return _("Path")
