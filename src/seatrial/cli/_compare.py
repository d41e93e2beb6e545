"""``seatrial compare``: what changed between a baseline run and a candidate run."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store, project
from seatrial.cli._options import TEXT_JSON_OR_MD, Db, Output, TextJsonOrMd, chosen_format
from seatrial.i18n import N_


@app.command(name="compare")
@guarded
def compare_command(
    base: Annotated[
        str, typer.Argument(metavar="BASE", help=N_("Baseline run: id, prefix, tag, `latest`."))
    ],
    candidate: Annotated[
        str,
        typer.Argument(metavar="CANDIDATE", help=N_("Candidate run: id, prefix, tag, `latest`.")),
    ],
    format: TextJsonOrMd = "text",
    output: Output = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression", help=N_("Exit 1 when a case regressed (flaky cases aside).")
        ),
    ] = False,
    db: Db = None,
) -> None:
    """Per-case transitions (regressed, fixed, still failing, new, removed, flaky), pass-rate
    changes with intervals by category, metric and failure-type shifts."""
    from seatrial.compare import compare_runs, resolve_run_ref, to_markdown, to_text

    chosen_format(format, TEXT_JSON_OR_MD)
    config = project()
    with open_store(db, config) as store:
        comparison = compare_runs(
            store, resolve_run_ref(store, base), resolve_run_ref(store, candidate)
        )
    if format == "text" and output is None:
        for line in to_text(comparison):
            console.print(line, highlight=False, soft_wrap=True)
    else:
        if format == "json":
            text = json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False) + "\n"
        elif format == "md":
            text = to_markdown(comparison)
        else:
            text = "\n".join(to_text(comparison)) + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            output.write_text(text, encoding="utf-8")
            console.print(f"wrote {output}")
    if fail_on_regression and comparison.of("regressed"):
        raise typer.Exit(1)
