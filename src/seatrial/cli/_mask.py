"""``seatrial mask --check``: show what masking would replace in a file.

A trace export (any format ``seatrial ingest`` reads) is masked trace by trace; any other file
is masked as plain text, line by line, with one set of tokens for the whole file (a list of
user messages to turn into cases, say). Nothing is written: ``--check`` prints where each value
is, with its middle hidden, and its token; without ``--check`` the masked file goes to standard
output.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import project, speak_reader_language
from seatrial.cli._options import Lang
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.config import Config
    from seatrial.dataset import MaskFinding
    from seatrial.trace import Trace

_TEXT_SCOPE = "text"


@app.command("mask")
@guarded
def mask(
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help=N_("A trace export, or a plain text file."))
    ],
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help=N_("Print what would be masked (value hidden, token) and counts per kind."),
        ),
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help=N_(
                "The seatrial.yaml whose mask: section applies (default: the one found from "
                "the current folder up)."
            ),
        ),
    ] = None,
    lang: Lang = None,
) -> None:
    """Mask personal data in FILE as ingestion would, writing nothing: with --check, list what
    would be replaced; without, print the masked file to standard output."""
    from seatrial.dataset import Masker
    from seatrial.i18n import reader_language, set_language
    from seatrial.trace import trace_to_otlp

    set_language(reader_language(lang))  # until the settings, which may name a language, load
    settings = _settings_from(config)
    speak_reader_language(lang, settings)
    masker = Masker(settings.mask)
    traces = _traces_in(file)
    if traces is None:
        lines = _text(file).splitlines()
        if check:
            _print_findings(masker.text_findings(lines, _TEXT_SCOPE), file, traces=None)
        else:
            for line in lines:
                console.print(masker.mask_text(line, _TEXT_SCOPE), markup=False, soft_wrap=True)
        return
    if check:
        found = [finding for trace in traces for finding in masker.findings(trace)]
        _print_findings(found, file, traces=len(traces))
        return
    for trace in traces:
        masked = masker.mask_trace(trace).trace
        document = trace_to_otlp(masked, service_name=str(masked.resource.get("service.name", "")))
        console.print(json.dumps(document, ensure_ascii=False), markup=False, soft_wrap=True)


def _settings_from(config: Path | None) -> Config:
    from seatrial.config import CONFIG_FILE, load_config

    if config is None:
        return project()
    if not config.exists():
        raise ConfigError(
            _("--config {path}: no such file or folder; name a {file}").format(
                path=config, file=CONFIG_FILE
            )
        )
    if config.is_file() and config.name != CONFIG_FILE:
        raise ConfigError(
            _("--config {path}: expected a file named {file} or the folder holding it").format(
                path=config, file=CONFIG_FILE
            )
        )
    return load_config(config)


def _traces_in(file: Path) -> list[Trace] | None:
    """The file's traces, or None when it is not JSON or JSONL (then it is plain text)."""
    from seatrial.trace import TraceFormatError, read_trace_file

    text = _text(file)
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return read_trace_file(file).traces
    except TraceFormatError as exc:
        raise InputError(
            _("{error}\n(a file that is not JSON is masked as plain text)").format(error=exc)
        ) from None


def _text(file: Path) -> str:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise InputError(
            _("{path}: cannot be read ({reason})").format(
                path=file, reason=exc.strerror or _("I/O error")
            )
        ) from None
    if raw.startswith(b"\x1f\x8b"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            raise InputError(_("{path}: a damaged gzip file").format(path=file)) from None
    return raw.decode("utf-8-sig", errors="replace")


def _print_findings(found: list[MaskFinding], file: Path, *, traces: int | None) -> None:
    if traces is None:
        what = _("plain text")
    else:
        what = ngettext("{count} trace", "{count} traces", traces).format(count=traces)
    if not found:
        console.print(
            _("{path} ({what}): nothing to mask").format(path=escape(str(file)), what=what)
        )
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in (
        pgettext("mask column", "kind"),
        pgettext("mask column", "where"),
        pgettext("mask column", "value"),
        pgettext("mask column", "token"),
    ):
        table.add_column(column)
    several = len({finding.trace_id for finding in found}) > 1
    for finding in found:
        where = (
            _("trace {trace_id} {where}").format(trace_id=finding.trace_id, where=finding.where)
            if several
            else finding.where
        )
        table.add_row(finding.kind, escape(where), escape(finding.preview), escape(finding.token))
    console.print(table)
    counts = Counter(finding.kind for finding in found)
    summary = pgettext("list separator", ", ").join(
        f"{kind} {count}" for kind, count in sorted(counts.items())
    )
    console.print(
        ngettext(
            "{path} ({what}): would mask {count} value ({summary}); nothing was written",
            "{path} ({what}): would mask {count} values ({summary}); nothing was written",
            len(found),
        ).format(path=escape(str(file)), what=what, count=len(found), summary=summary)
    )
