"""``seatrial cases from-trace`` (a production trace becomes a case) and ``seatrial traces``
(list, show and check the stored production traces)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, cases_app, console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import (
    CheckLimit,
    Db,
    Lang,
    TextOrJson,
    TraceFormat,
    TracesLimit,
    chosen_format,
)
from seatrial.errors import InputError
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.dataset import ProposedCase
    from seatrial.store import Store, TraceHead
    from seatrial.trace import Trace

traces_app = typer.Typer(
    help=N_(
        "Production traces stored by `seatrial ingest` and `seatrial serve`: list, show, check."
    ),
    no_args_is_help=True,
)
app.add_typer(traces_app, name="traces")

CHECK_LIMIT = 1_000
"""Traces `seatrial traces check` reads by default, newest first."""
DETAIL_CHARS = 120
"""How much of a tool call's arguments `seatrial traces show` prints."""

Since = Annotated[
    str,
    typer.Option(
        help=N_("Traces started at or after: a day (2026-07-01), a minute, or 24h / 7d ago.")
    ),
]
Until = Annotated[
    str, typer.Option(help=N_("Traces started before the end of this day or minute."))
]
Service = Annotated[str, typer.Option(help=N_("Only traces of this service (the agent)."))]
Tool = Annotated[str, typer.Option(help=N_("Only traces that called this tool."))]


def _summary(proposed: ProposedCase) -> str:
    kept = sum(1 for p in proposed.proposals if p.keep)
    turns = len(proposed.case.user_turns)
    turn_count = ngettext("{n} user turn", "{n} user turns", turns).format(n=turns)
    proposals = ngettext(
        "{n} proposed assertion ({kept} on)",
        "{n} proposed assertions ({kept} on)",
        len(proposed.proposals),
    ).format(n=len(proposed.proposals), kept=kept)
    return _("case {case_id}: {turns}, {proposals}").format(
        case_id=proposed.case.id, turns=turn_count, proposals=proposals
    )


def _cases_from_file(
    store: Store, export: Path, fmt: str | None, case_id: str | None
) -> list[ProposedCase]:
    """Ingest ``export`` masked, then a case from each stored trace."""
    from seatrial.dataset import Masker, case_from_trace, ingest_traces
    from seatrial.trace import TRACE_FORMATS, TraceFormatError, read_trace_file

    if fmt is not None and fmt not in TRACE_FORMATS:
        raise InputError(
            _("unknown trace format {format!r}: use one of {formats}").format(
                format=fmt, formats=", ".join(TRACE_FORMATS)
            )
        )
    try:
        found = read_trace_file(export)
    except TraceFormatError as exc:
        raise InputError(str(exc)) from None
    if fmt is not None and found.format != fmt:
        raise InputError(
            _("{path} reads as a {found} file, not {format}").format(
                path=export, found=found.format, format=fmt
            )
        )
    trace_ids = list(dict.fromkeys(t.trace_id for t in found.traces))
    if case_id is not None and len(trace_ids) != 1:
        raise InputError(
            _("--case-id names one case; {path} holds {count} traces").format(
                path=export, count=len(trace_ids)
            )
        )
    masker = Masker(project().mask)
    outcome = ingest_traces(store, found.traces, source=found.format, masker=masker)
    masked = ", ".join(f"{kind} {n}" for kind, n in sorted(outcome.masked.items()))
    console.print(
        _("ingested {path} ({format}): {traces}, {spans}; masked: {masked}").format(
            path=export,
            format=found.format,
            traces=ngettext("{n} trace", "{n} traces", outcome.traces).format(n=outcome.traces),
            spans=ngettext("{n} span", "{n} spans", outcome.spans).format(n=outcome.spans),
            masked=masked or _("nothing"),
        ),
        markup=False,
    )
    cases = []
    for trace_id in trace_ids:
        try:
            stored = store.ingested_trace(trace_id)
        except InputError:
            console.print(
                _(
                    "trace {trace_id} joined a run's attempt (its trace id is the attempt's); "
                    "it has no case of its own"
                ).format(trace_id=trace_id),
                markup=False,
            )
            continue
        cases.append(case_from_trace(stored, case_id=case_id))
    return cases


@cases_app.command("from-trace")
@guarded
def from_trace(
    trace_id: Annotated[
        str | None, typer.Argument(help=N_("A stored trace's id (`seatrial traces list`)."))
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", help=N_("An exported trace file: ingest it masked, then make its cases.")
        ),
    ] = None,
    format: TraceFormat = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help=N_("The suite file to write (default: the case id, or the file's name).")
        ),
    ] = None,
    case_id: Annotated[
        str | None, typer.Option("--case-id", help=N_("The case's id (one trace only)."))
    ] = None,
    force: Annotated[bool, typer.Option(help=N_("Overwrite the suite file if it exists."))] = False,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Make a case from a production trace, to run with `seatrial run`.

    The case holds the user's turns, what the tools answered, and assertions proposed from
    what happened, each to keep or drop.
    """
    from seatrial.dataset import case_from_trace, write_cases_file

    config = project()
    speak_reader_language(lang, config)
    if (trace_id is None) == (file is None):
        raise InputError(_("name one trace: a TRACE_ID, or --file EXPORT (not both)"))
    with open_store(db, config) as store:
        if file is not None:
            cases = _cases_from_file(store, file, format, case_id)
            default = Path(f"{file.name.split('.')[0]}.cases.yaml")
        else:
            assert trace_id is not None
            cases = [case_from_trace(store.ingested_trace(trace_id), case_id=case_id)]
            default = Path(f"{cases[0].case.id}.yaml")
    if not cases:
        raise InputError(_("no case was made: the file's traces all joined runs' attempts"))
    path = write_cases_file(cases, out or default, overwrite=force)
    for proposed in cases:
        console.print(_summary(proposed), markup=False)
    console.print(
        _("wrote {path}; run it: seatrial run {path} --agent SPEC").format(path=path), markup=False
    )


def _heads_table(heads: list[TraceHead]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    columns = (
        ("trace", pgettext("traces column", "trace")),
        ("started", pgettext("traces column", "started")),
        ("service", pgettext("traces column", "service")),
        ("spans", pgettext("traces column", "spans")),
        ("error", pgettext("traces column", "error")),
        ("tools", pgettext("traces column", "tools")),
        ("tokens", pgettext("traces column", "tokens")),
        ("masked", pgettext("traces column", "masked")),
    )
    for column, title in columns:
        table.add_column(title, no_wrap=column in ("trace", "started"))
    for head in heads:
        masked = ", ".join(f"{kind} {n}" for kind, n in sorted(head.masked.items()))
        table.add_row(
            head.trace_id,
            _when(head.started_at),
            escape(head.service or "-"),
            str(head.span_count),
            pgettext("trace status", "error") if head.error else "",
            escape(", ".join(head.tools)),
            f"{head.input_tokens}/{head.output_tokens}",
            escape(masked),
        )
    return table


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


@traces_app.command("list")
@guarded
def list_traces(
    since: Since = "",
    until: Until = "",
    service: Service = "",
    tool: Tool = "",
    error: Annotated[str, typer.Option(help=N_("yes: only failed traces; no: only others."))] = "",
    failed_check: Annotated[
        str, typer.Option("--failed-check", help=N_("Only traces on which this check failed."))
    ] = "",
    limit: TracesLimit = 50,
    format: TextOrJson = "text",
    db: Db = None,
    lang: Lang = None,
) -> None:
    """List stored production traces, newest first."""
    from seatrial.dataset import TraceFilter

    chosen_format(format)
    config = project()
    speak_reader_language(lang, config)
    chosen = TraceFilter(since, until, service, tool, error, failed_check)
    with open_store(db, config) as store:
        heads = store.trace_heads(chosen.query(limit=limit))
    if format == "json":
        rows = [head.model_dump(mode="json") for head in heads]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    if not heads:
        console.print(_("no stored trace matches (`seatrial ingest FILE` stores some)"))
        return
    console.print(_heads_table(heads))


def _span_lines(trace: Trace) -> Table:
    from seatrial.trace import attrs

    start = min((s.start_time_unix_nano for s in trace.spans), default=0)
    calls = {call.span.span_id: call for call in trace.tool_calls()}
    table = Table(show_edge=False, pad_edge=False)
    columns = (
        ("start ms", pgettext("spans column", "start ms")),
        ("duration ms", pgettext("spans column", "duration ms")),
        ("span", pgettext("spans column", "span")),
        ("status", pgettext("spans column", "status")),
        ("detail", pgettext("spans column", "detail")),
    )
    for column, title in columns:
        table.add_column(title, justify="right" if column.endswith("ms") else "left")
    for span in trace.spans:
        call = calls.get(span.span_id)
        detail = ""
        if call is not None:
            detail = json.dumps(call.arguments, ensure_ascii=False, default=str)[:DETAIL_CHARS]
        error = span.attributes.get(attrs.ERROR_TYPE)
        table.add_row(
            f"{(span.start_time_unix_nano - start) / 1e6:.1f}",
            f"{span.duration_ms:.1f}",
            escape(span.name),
            span.status + (f" ({error})" if error is not None else ""),
            escape(detail),
        )
    return table


@traces_app.command("show")
@guarded
def show_trace(
    trace_id: Annotated[str, typer.Argument(help=N_("The trace's id."))],
    format: TextOrJson = "text",
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Show one stored production trace: its summary, checks and spans."""
    chosen_format(format)
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        head = store.trace_head(trace_id)
        trace = store.ingested_trace(trace_id)
    if format == "json":
        data = {"head": head.model_dump(mode="json"), "trace": trace.model_dump(mode="json")}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return
    spans = ngettext("{n} span", "{n} spans", head.span_count).format(n=head.span_count)
    console.print(
        _("trace {trace_id} · {service} · {started} · {spans} · from {source}").format(
            trace_id=head.trace_id,
            service=head.service or _("no service"),
            started=_when(head.started_at),
            spans=spans,
            source=head.source,
        ),
        markup=False,
    )
    for check in head.checks:
        console.print(
            "  "
            + _("check {id}: {verdict} {reason}").format(
                id=check.id, verdict=check.verdict, reason=check.reason
            ),
            markup=False,
        )
    console.print(_span_lines(trace))


@traces_app.command("check")
@guarded
def check_traces(
    checks: Annotated[Path, typer.Argument(help=N_("A YAML list of L1/L2 assertions."))],
    since: Since = "",
    until: Until = "",
    service: Service = "",
    tool: Tool = "",
    limit: CheckLimit = CHECK_LIMIT,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Run L1/L2 checks over stored production traces and record each verdict.

    Exits 1 when a check failed on some trace (`seatrial traces list --failed-check ID` lists
    them).
    """
    from seatrial.dataset import TraceFilter, check_stored_traces, load_trace_checks

    config = project()
    speak_reader_language(lang, config)
    specs = load_trace_checks(checks)
    chosen = TraceFilter(since=since, until=until, service=service, tool=tool)
    with open_store(db, config) as store:
        outcome = check_stored_traces(store, specs, chosen.query(limit=limit))
    table = Table(show_edge=False, pad_edge=False)
    columns = (
        ("check", pgettext("checks column", "check")),
        ("pass", pgettext("checks column", "pass")),
        ("fail", pgettext("checks column", "fail")),
        ("not evaluated", pgettext("checks column", "not evaluated")),
    )
    for column, title in columns:
        table.add_column(title, justify="left" if column == "check" else "right")
    for check_id, verdicts in outcome.counts.items():
        table.add_row(
            escape(check_id),
            str(verdicts.get("pass", 0)),
            str(verdicts.get("fail", 0)),
            str(verdicts.get("not_evaluated", 0)),
        )
    console.print(
        _("checked {traces} with {checks}").format(
            traces=ngettext("{n} trace", "{n} traces", outcome.traces).format(n=outcome.traces),
            checks=ngettext("{n} check", "{n} checks", len(specs)).format(n=len(specs)),
        ),
        markup=False,
    )
    if outcome.counts:
        console.print(table)
    if outcome.failed_traces:
        failed = len(outcome.failed_traces)
        console.print(
            ngettext("{n} trace failed a check", "{n} traces failed a check", failed).format(
                n=failed
            ),
            markup=False,
        )
        raise typer.Exit(1)
