"""``seatrial ingest``: read exported trace files into the store, masked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import Db, Lang, TraceFormat
from seatrial.errors import InputError
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _
from seatrial.trace import TRACE_FORMATS

if TYPE_CHECKING:
    from seatrial.store import IngestOutcome
    from seatrial.trace import TraceFile


@app.command()
@guarded
def ingest(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE...",
            help=N_(
                "Exported trace files (JSON or JSONL, gzip allowed): OTLP/JSON, OpenInference, "
                "Langfuse, OpenAI chat logs, SWE-agent trajectories, agent protocol responses."
            ),
        ),
    ],
    format: TraceFormat = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Store production traces from exported files, masked with the project's `mask:` settings.

    Every file is read before anything is stored: a file that cannot be read stops the
    command (exit 2) with nothing stored. Each file is then stored in one transaction; spans
    already stored are skipped, so ingesting a file twice adds nothing.
    """
    from seatrial.dataset import Masker, ingest_traces
    from seatrial.store import IngestOutcome

    config = project()
    speak_reader_language(lang, config)
    if format is not None and format not in TRACE_FORMATS:
        raise InputError(
            _(
                "--format {format} is not a format Seatrial reads; use one of {formats}, or "
                "leave it out to recognise each file's format"
            ).format(format=format, formats=", ".join(TRACE_FORMATS))
        )
    read = [_read(path, format) for path in files]
    masker = Masker(config.mask)
    with open_store(db, config) as store:
        outcomes = []
        for found in read:
            outcome = ingest_traces(store, found.traces, source=found.format, masker=masker)
            outcomes.append(outcome)
            console.print(
                _("{path}: {format}, {outcome}").format(
                    path=escape(str(found.path)), format=found.format, outcome=_describe(outcome)
                ),
                highlight=False,
            )
        if len(outcomes) > 1:
            total = IngestOutcome(
                traces=sum(o.traces for o in outcomes),
                spans=sum(o.spans for o in outcomes),
                joined_attempts=sum(o.joined_attempts for o in outcomes),
                duplicate_spans=sum(o.duplicate_spans for o in outcomes),
                masked=_summed(outcomes),
            )
            files_read = ngettext("{count} file", "{count} files", len(outcomes))
            console.print(
                _("{files}: {outcome}").format(
                    files=files_read.format(count=len(outcomes)), outcome=_describe(total)
                ),
                highlight=False,
            )
        console.print(_("stored in {url}").format(url=store.url), highlight=False)


def _read(path: Path, format: str | None) -> TraceFile:
    from seatrial.trace import TraceFormatError, read_trace_file

    try:
        found = read_trace_file(path)
    except TraceFormatError as exc:
        raise InputError(str(exc)) from None
    if format is not None and found.format != format:
        raise InputError(
            _(
                "{path}: this file is {found}, not {format}; drop --format or give the file "
                "of that format"
            ).format(path=path, found=found.format, format=format)
        )
    return found


def _describe(outcome: IngestOutcome) -> str:
    parts = [
        ngettext("{count} trace", "{count} traces", outcome.traces).format(count=outcome.traces),
        ngettext("{count} span", "{count} spans", outcome.spans).format(count=outcome.spans),
    ]
    if outcome.joined_attempts:
        joined = ngettext(
            "{count} attempt joined", "{count} attempts joined", outcome.joined_attempts
        )
        parts.append(joined.format(count=outcome.joined_attempts))
    if outcome.duplicate_spans:
        skipped = ngettext(
            "{count} span already stored (skipped)",
            "{count} spans already stored (skipped)",
            outcome.duplicate_spans,
        )
        parts.append(skipped.format(count=outcome.duplicate_spans))
    kinds = pgettext("list separator", ", ")
    masked = kinds.join(f"{kind} {count}" for kind, count in sorted(outcome.masked.items()))
    parts.append(_("masked: {masked}").format(masked=masked or _("nothing")))
    return pgettext("clauses", ", ").join(parts)


def _summed(outcomes: list[IngestOutcome]) -> dict[str, int]:
    total: dict[str, int] = {}
    for outcome in outcomes:
        for kind, count in outcome.masked.items():
            total[kind] = total.get(kind, 0) + count
    return total
