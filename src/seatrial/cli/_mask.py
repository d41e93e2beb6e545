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
from seatrial.cli._context import project
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import N_, counted

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
) -> None:
    """Mask personal data in FILE as ingestion would, writing nothing: with --check, list what
    would be replaced; without, print the masked file to standard output."""
    from seatrial.dataset import Masker
    from seatrial.trace import trace_to_otlp

    masker = Masker(_settings_from(config).mask)
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
        raise ConfigError(f"--config {config}: no such file or folder; name a {CONFIG_FILE}")
    if config.is_file() and config.name != CONFIG_FILE:
        raise ConfigError(
            f"--config {config}: expected a file named {CONFIG_FILE} or the folder holding it"
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
        raise InputError(f"{exc}\n(a file that is not JSON is masked as plain text)") from None


def _text(file: Path) -> str:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot be read ({exc.strerror or 'I/O error'})") from None
    if raw.startswith(b"\x1f\x8b"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            raise InputError(f"{file}: a damaged gzip file") from None
    return raw.decode("utf-8-sig", errors="replace")


def _print_findings(found: list[MaskFinding], file: Path, *, traces: int | None) -> None:
    what = "plain text" if traces is None else counted(traces, "trace")
    if not found:
        console.print(f"{escape(str(file))} ({what}): nothing to mask")
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in ("kind", "where", "value", "token"):
        table.add_column(column)
    several = len({finding.trace_id for finding in found}) > 1
    for finding in found:
        where = f"trace {finding.trace_id} {finding.where}" if several else finding.where
        table.add_row(finding.kind, escape(where), escape(finding.preview), escape(finding.token))
    console.print(table)
    counts = Counter(finding.kind for finding in found)
    summary = ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
    console.print(
        f"{escape(str(file))} ({what}): would mask {len(found)} values ({summary}); "
        "nothing was written"
    )
