"""``seatrial drift``: compare a probe run's behaviour with its baseline's; exit 1 on alarm."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._commands import _open_store
from seatrial.cli._options import Db, DriftBaseline, TextOrJson
from seatrial.errors import InputError

if TYPE_CHECKING:
    from seatrial.compare import DriftReport, MetricDrift

FORMATS = ("text", "json")
_HEADINGS = {"tool_sequence": "tool sequence", "reply_length": "reply length", "verdict": "verdict"}


def _cell(metric: MetricDrift) -> str:
    figure = f"{metric.distance:.2f}"
    if metric.alarm:
        return f"[bold red]{figure} ALARM[/]"
    if metric.note:
        return f"{figure} [dim](few attempts)[/]"
    return figure if metric.distance else f"[dim]{figure}[/]"


def print_drift(report: DriftReport) -> None:
    """The comparison as a table (pooled, then every case that moved), notes and alarms."""
    from seatrial.compare import METRICS, POOLED

    kind = "probe" if report.probe else "suite"
    flag = "" if report.probe else " (not flagged probe: true)"
    console.print(
        f"drift of run [bold]{report.run_id}[/] ({kind} {escape(report.suite)}{flag}, agent "
        f"{escape(report.agent)})\n  against {report.baseline_run_id} "
        f"({escape(report.baseline_reason)})",
        highlight=False,
    )
    limits = report.thresholds
    console.print(
        "  thresholds: "
        + ", ".join(f"{_HEADINGS[m]} {limits.limit(m):.2f}" for m in METRICS)
        + f" (an alarm needs {limits.min_attempts}+ attempts on each side)",
        highlight=False,
    )
    moved = [case for case in report.cases if case.moved]
    scopes = ([report.pooled] if report.pooled is not None else []) + moved
    if scopes:
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("case")
        table.add_column("attempts", justify="right")
        for metric in METRICS:
            table.add_column(_HEADINGS[metric], justify="right")
        for scope in scopes:
            first = scope.metrics[0]
            table.add_row(
                "all cases pooled" if scope.case_id == POOLED else escape(scope.case_id),
                f"{first.base_attempts} -> {first.run_attempts}",
                *(_cell(m) for m in scope.metrics),
            )
        console.print(table)
    unchanged = len(report.cases) - len(moved)
    console.print(f"{len(report.cases)} cases compared, {unchanged} unchanged", highlight=False)
    if report.only_in_run:
        shown = ", ".join(report.only_in_run)
        console.print(f"only in the run (not compared): {shown}", markup=False, highlight=False)
    if report.only_in_baseline:
        shown = ", ".join(report.only_in_baseline)
        console.print(f"only in the baseline: {shown}", markup=False, highlight=False)
    for note in report.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    for alarm in report.alarms:
        err_console.print(f"[bold red]drift alarm:[/] {escape(alarm.message())}", highlight=False)
    if not report.alarms:
        console.print("[green]no drift alarm[/]")


@app.command()
@guarded
def drift(
    run: Annotated[
        str, typer.Argument(metavar="RUN", help="A run id, a unique prefix, a tag, or `latest`.")
    ],
    baseline: DriftBaseline = None,
    max_distance: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Alarm when a distance exceeds this (every metric)."),
    ] = 0.2,
    format: TextOrJson = "text",
    db: Db = None,
) -> None:
    """Compare a run's tool sequences, reply lengths and verdicts with its baseline's; exit 1
    on a drift alarm, 0 without, 2 on bad input."""
    from seatrial.compare import probe_drift, resolve_run_ref

    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    with _open_store(db) as store:
        run_id = resolve_run_ref(store, run)
        baseline_id = resolve_run_ref(store, baseline) if baseline is not None else None
        report = probe_drift(store, run_id, baseline_id, max_distance=max_distance)
    if format == "json":
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        print_drift(report)
    raise typer.Exit(1 if report.alarmed else 0)
