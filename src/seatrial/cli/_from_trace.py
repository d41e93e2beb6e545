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
from seatrial.cli._context import open_store, project
from seatrial.cli._options import (
    CheckLimit,
    Db,
    TextOrJson,
    TraceFormat,
    TracesLimit,
    chosen_format,
)
from seatrial.errors import InputError
from seatrial.i18n import N_, counted

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
    return (
        f"case {proposed.case.id}: {turns} user turn{'s' if turns != 1 else ''}, "
        f"{len(proposed.proposals)} proposed assertions ({kept} on)"
    )


def _cases_from_file(
    store: Store, export: Path, fmt: str | None, case_id: str | None
) -> list[ProposedCase]:
    """Ingest ``export`` masked, then a case from each stored trace."""
    from seatrial.dataset import Masker, case_from_trace, ingest_traces
    from seatrial.trace import TRACE_FORMATS, TraceFormatError, read_trace_file

    if fmt is not None and fmt not in TRACE_FORMATS:
        raise InputError(f"unknown trace format {fmt!r}: use one of {', '.join(TRACE_FORMATS)}")
    try:
        found = read_trace_file(export)
    except TraceFormatError as exc:
        raise InputError(str(exc)) from None
    if fmt is not None and found.format != fmt:
        raise InputError(f"{export} reads as a {found.format} file, not {fmt}")
    trace_ids = list(dict.fromkeys(t.trace_id for t in found.traces))
    if case_id is not None and len(trace_ids) != 1:
        raise InputError(f"--case-id names one case; {export} holds {len(trace_ids)} traces")
    masker = Masker(project().mask)
    outcome = ingest_traces(store, found.traces, source=found.format, masker=masker)
    masked = ", ".join(f"{kind} {n}" for kind, n in sorted(outcome.masked.items())) or "nothing"
    console.print(
        f"ingested {export} ({found.format}): {counted(outcome.traces, 'trace')}, "
        f"{counted(outcome.spans, 'span')}; "
        f"masked: {masked}",
        markup=False,
    )
    cases = []
    for trace_id in trace_ids:
        try:
            stored = store.ingested_trace(trace_id)
        except InputError:
            console.print(
                f"trace {trace_id} joined a run's attempt (its trace id is the attempt's); "
                "it has no case of its own",
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
) -> None:
    """Make a case from a production trace, to run with `seatrial run`.

    The case holds the user's turns, what the tools answered, and assertions proposed from
    what happened, each to keep or drop.
    """
    from seatrial.dataset import case_from_trace, write_cases_file

    if (trace_id is None) == (file is None):
        raise InputError("name one trace: a TRACE_ID, or --file EXPORT (not both)")
    with open_store(db) as store:
        if file is not None:
            cases = _cases_from_file(store, file, format, case_id)
            default = Path(f"{file.name.split('.')[0]}.cases.yaml")
        else:
            assert trace_id is not None
            cases = [case_from_trace(store.ingested_trace(trace_id), case_id=case_id)]
            default = Path(f"{cases[0].case.id}.yaml")
    if not cases:
        raise InputError("no case was made: the file's traces all joined runs' attempts")
    path = write_cases_file(cases, out or default, overwrite=force)
    for proposed in cases:
        console.print(_summary(proposed), markup=False)
    console.print(f"wrote {path}; run it: seatrial run {path} --agent SPEC", markup=False)


def _heads_table(heads: list[TraceHead]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("trace", "started", "service", "spans", "error", "tools", "tokens", "masked"):
        table.add_column(column, no_wrap=column in ("trace", "started"))
    for head in heads:
        masked = ", ".join(f"{kind} {n}" for kind, n in sorted(head.masked.items()))
        table.add_row(
            head.trace_id,
            _when(head.started_at),
            escape(head.service or "-"),
            str(head.span_count),
            "error" if head.error else "",
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
) -> None:
    """List stored production traces, newest first."""
    from seatrial.dataset import TraceFilter

    chosen_format(format)
    chosen = TraceFilter(since, until, service, tool, error, failed_check)
    with open_store(db) as store:
        heads = store.trace_heads(chosen.query(limit=limit))
    if format == "json":
        rows = [head.model_dump(mode="json") for head in heads]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    if not heads:
        console.print("no stored trace matches (`seatrial ingest FILE` stores some)")
        return
    console.print(_heads_table(heads))


def _span_lines(trace: Trace) -> Table:
    from seatrial.trace import attrs

    start = min((s.start_time_unix_nano for s in trace.spans), default=0)
    calls = {call.span.span_id: call for call in trace.tool_calls()}
    table = Table(show_edge=False, pad_edge=False)
    for column in ("start ms", "duration ms", "span", "status", "detail"):
        table.add_column(column, justify="right" if column.endswith("ms") else "left")
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
) -> None:
    """Show one stored production trace: its summary, checks and spans."""
    chosen_format(format)
    with open_store(db) as store:
        head = store.trace_head(trace_id)
        trace = store.ingested_trace(trace_id)
    if format == "json":
        data = {"head": head.model_dump(mode="json"), "trace": trace.model_dump(mode="json")}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return
    console.print(
        f"trace {head.trace_id} · {head.service or 'no service'} · {_when(head.started_at)} · "
        f"{head.span_count} spans · from {head.source}",
        markup=False,
    )
    for check in head.checks:
        console.print(f"  check {check.id}: {check.verdict} {check.reason}", markup=False)
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
) -> None:
    """Run L1/L2 checks over stored production traces and record each verdict.

    Exits 1 when a check failed on some trace (`seatrial traces list --failed-check ID` lists
    them).
    """
    from seatrial.dataset import TraceFilter, check_stored_traces, load_trace_checks

    specs = load_trace_checks(checks)
    chosen = TraceFilter(since=since, until=until, service=service, tool=tool)
    with open_store(db) as store:
        outcome = check_stored_traces(store, specs, chosen.query(limit=limit))
    table = Table(show_edge=False, pad_edge=False)
    for column in ("check", "pass", "fail", "not evaluated"):
        table.add_column(column, justify="left" if column == "check" else "right")
    for check_id, verdicts in outcome.counts.items():
        table.add_row(
            escape(check_id),
            str(verdicts.get("pass", 0)),
            str(verdicts.get("fail", 0)),
            str(verdicts.get("not_evaluated", 0)),
        )
    checked = f"{counted(outcome.traces, 'trace')} with {counted(len(specs), 'check')}"
    console.print(f"checked {checked}", markup=False)
    if outcome.counts:
        console.print(table)
    if outcome.failed_traces:
        failed = counted(len(outcome.failed_traces), "trace")
        console.print(f"{failed} failed a check", markup=False)
        raise typer.Exit(1)
