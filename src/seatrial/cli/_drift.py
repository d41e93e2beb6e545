"""``seatrial drift``: compare a probe run's behaviour with its baseline's; exit 1 on alarm."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from seatrial.cli._app import app, guarded
from seatrial.cli._context import open_store
from seatrial.cli._options import Db, DriftBaseline, TextOrJson, chosen_format
from seatrial.cli._output import print_drift
from seatrial.i18n import N_


@app.command()
@guarded
def drift(
    run: Annotated[
        str,
        typer.Argument(metavar="RUN", help=N_("A run id, a unique prefix, a tag, or `latest`.")),
    ],
    baseline: DriftBaseline = None,
    max_distance: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help=N_("Alarm when a distance exceeds this (every metric).")
        ),
    ] = 0.2,
    format: TextOrJson = "text",
    db: Db = None,
) -> None:
    """Compare a run's tool sequences, reply lengths and verdicts with its baseline's; exit 1
    on a drift alarm, 0 without, 2 on bad input."""
    from seatrial.compare import probe_drift, resolve_run_ref

    chosen_format(format)
    with open_store(db) as store:
        run_id = resolve_run_ref(store, run)
        baseline_id = resolve_run_ref(store, baseline) if baseline is not None else None
        report = probe_drift(store, run_id, baseline_id, max_distance=max_distance)
    if format == "json":
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        print_drift(report)
    raise typer.Exit(1 if report.alarmed else 0)
