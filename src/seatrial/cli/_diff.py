"""``seatrial diff``: two stored attempts step by step, with the first divergence marked."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store
from seatrial.cli._options import TEXT_JSON_OR_MD, Db, TextJsonOrMd, chosen_format
from seatrial.i18n import N_


@app.command()
@guarded
def diff(
    attempt_a: Annotated[
        str,
        typer.Argument(
            metavar="A",
            help=N_("RUN:CASE or RUN:CASE#N (RUN: id, unique prefix, tag or `latest`)."),
        ),
    ],
    attempt_b: Annotated[
        str,
        typer.Argument(
            metavar="B", help=N_("The attempt to compare with A (a bare RUN: A's case).")
        ),
    ],
    case: Annotated[
        str | None, typer.Option("--case", help=N_("The case, when A and B are bare runs."))
    ] = None,
    attempt: Annotated[
        int | None,
        typer.Option(
            "--attempt", min=1, help=N_("1-based attempt (default: the first that did not pass).")
        ),
    ] = None,
    format: TextJsonOrMd = "text",
    db: Db = None,
) -> None:
    """Align two attempts' trajectories and mark the first step where they diverge.

    Exit 0 whether or not they differ (the differences are the answer); 2 on a bad reference.
    """
    from seatrial.compare import (
        diff_attempts,
        diff_json,
        header_of,
        load_attempt,
        parse_attempt_ref,
        render_markdown,
        render_terminal,
    )

    chosen_format(format, TEXT_JSON_OR_MD)
    with open_store(db) as store:
        ref_a = parse_attempt_ref(store, attempt_a, case, attempt)
        # `diff RUN1:CASE RUN2` means the same case in RUN2.
        refs = [ref_a, parse_attempt_ref(store, attempt_b, case or ref_a.case_id, attempt)]
        records = [load_attempt(store, ref) for ref in refs]
        a, b = (header_of(r, store.get_run(r.run_id).agent) for r in records)
    result = diff_attempts(records[0], records[1])
    if format == "json":
        sys.stdout.write(json.dumps(diff_json(result, a, b), indent=2, ensure_ascii=False) + "\n")
    elif format == "md":
        sys.stdout.write(render_markdown(result, a, b))
    else:
        console.print(render_terminal(result, a, b))
