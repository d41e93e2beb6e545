"""``seatrial failures``: a run's failed attempts grouped by what went wrong."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import Db, Lang, TextOrJson, chosen_format
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.dataset import FailureCluster
    from seatrial.store import Store

EXAMPLE_CHARS = 100
"""How much of an example's reason the table shows."""


async def _named(clusters: list[FailureCluster], store: Store, model: str) -> list[FailureCluster]:
    from seatrial.dataset import name_clusters
    from seatrial.gateway import Gateway

    config = project()
    gateway = Gateway(config.gateway_config(), store=store, project_dir=config.project_dir)
    try:
        return await name_clusters(clusters, gateway, model)
    finally:
        await gateway.aclose()


def _cut(text: str, limit: int = EXAMPLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _headline(run_id: str, clusters: list[FailureCluster]) -> str:
    if not clusters:
        return _("run {run_id}: no attempt failed").format(run_id=run_id)
    failed = sum(cluster.count for cluster in clusters)
    attempts = ngettext("{count} failed attempt", "{count} failed attempts", failed)
    groups = ngettext("{count} cluster", "{count} clusters", len(clusters))
    return _("run {run_id}: {attempts} in {clusters}").format(
        run_id=run_id,
        attempts=attempts.format(count=failed),
        clusters=groups.format(count=len(clusters)),
    )


def _print(run_id: str, clusters: list[FailureCluster], verbose: bool) -> None:
    from seatrial.record import failure_type_word, verdict_word

    console.print(_headline(run_id, clusters), highlight=False)
    if not clusters:
        return
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column(pgettext("failures column", "type"))
    table.add_column(pgettext("failures column", "check"))
    table.add_column(pgettext("failures column", "count"), justify="right")
    table.add_column(pgettext("failures column", "label"))
    table.add_column(pgettext("failures column", "example"))
    for number, cluster in enumerate(clusters, start=1):
        label = escape(cluster.label)
        if cluster.name:
            label = f"[bold]{escape(cluster.name)}[/]\n{label}"
        example = cluster.example
        table.add_row(
            str(number),
            escape(failure_type_word(cluster.failure_type)),
            escape(cluster.check or "-"),
            str(cluster.count),
            label,
            escape(f"{example.case_id} #{example.attempt}: {_cut(example.reason)}"),
        )
    console.print(table)
    if verbose:
        for number, cluster in enumerate(clusters, start=1):
            console.print(f"\n[bold]{number}[/] {escape(cluster.label)}", highlight=False)
            for member in cluster.members:
                console.print(
                    "  "
                    + _("{case_id} #{attempt} {verdict}: {reason}").format(
                        case_id=escape(member.case_id),
                        attempt=member.attempt,
                        verdict=verdict_word(member.verdict),
                        reason=escape(_cut(member.reason)),
                    ),
                    highlight=False,
                )
                if member.divergence:
                    console.print(
                        "    "
                        + _("first divergence: {step}").format(
                            step=escape(_cut(member.divergence))
                        ),
                        highlight=False,
                    )


@app.command()
@guarded
def failures(
    run: Annotated[
        str,
        typer.Argument(metavar="RUN", help=N_("A run id, a unique prefix, `latest`, or a tag.")),
    ],
    format: TextOrJson = "text",
    as_json: Annotated[
        bool, typer.Option("--json", hidden=True, help=N_("The older spelling of --format json."))
    ] = False,
    name_with: Annotated[
        str | None,
        typer.Option(
            "--name-with",
            metavar="MODEL",
            help=N_("Ask this gateway model for a short name per cluster (purpose generation)."),
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=2.0,
            help=N_(
                "Cosine distance under which attempts that failed the same check merge "
                "(default: the embedding model's, see docs/failures.md); two checks never merge."
            ),
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help=N_("List every cluster's members."))
    ] = False,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Group a run's failed attempts by failure type and the check they failed, then by what
    their reasons, replies and first divergent steps say."""
    import asyncio

    from seatrial.compare import resolve_run_ref
    from seatrial.dataset import cluster_failures

    as_json = chosen_format(format) == "json" or as_json
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        run_id = resolve_run_ref(store, run)
        clusters = cluster_failures(store, run_id, threshold=threshold)
        if name_with and clusters:
            clusters = asyncio.run(_named(clusters, store, name_with))
    if as_json:
        document = {"run_id": run_id, "clusters": [cluster.as_dict() for cluster in clusters]}
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    _print(run_id, clusters, verbose)
