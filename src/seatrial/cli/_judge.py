"""``seatrial judge``: measure a judge against human labels."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from seatrial.cli._app import app, console, guarded
from seatrial.errors import InputError

if TYPE_CHECKING:
    from seatrial.judge import AgreementReport

judge_app = typer.Typer(
    help="The LLM judge: how far its verdicts agree with people's.",
    no_args_is_help=True,
)
app.add_typer(judge_app, name="judge")

FORMATS = ("text", "json")


def _figure(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _print_text(report: AgreementReport) -> None:
    console.print(f"items       {report.items}")
    console.print(f"agreement   {report.agreement:.3f}")
    interval = report.kappa_interval
    spread = (
        f"  ({interval.confidence:.0%} CI {interval.low:.3f} to {interval.high:.3f}, "
        f"{interval.resamples} bootstrap resamples, seed {interval.seed})"
        if interval is not None
        else ""
    )
    console.print(f"kappa       {_figure(report.kappa)}{spread}", markup=False)
    console.print(
        f"base rate   {report.base_rate:.3f}  (share of human labels {report.positive_label!r})"
    )
    matrix = Table(title="confusion (rows: people, columns: judge)", title_justify="left")
    matrix.add_column("")
    for label in report.confusion.labels:
        matrix.add_column(label, justify="right")
    for label, row in zip(report.confusion.labels, report.confusion.counts, strict=True):
        matrix.add_row(label, *(str(count) for count in row))
    console.print(matrix)
    if report.categories:
        table = Table(title="per category", title_justify="left")
        for column in ("category", "items", "agreement", "kappa", "base rate"):
            table.add_column(column, justify="left" if column == "category" else "right")
        for category in report.categories:
            table.add_row(
                category.category,
                str(category.items),
                f"{category.agreement:.3f}",
                _figure(category.kappa),
                f"{category.base_rate:.3f}",
            )
        console.print(table)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)


@judge_app.command()
@guarded
def agreement(
    predictions: Annotated[
        Path,
        typer.Option(
            help="The judge's labels: {id?, label} JSONL, or an LLMBar evaluator .result.json."
        ),
    ],
    labels: Annotated[
        Path,
        typer.Option(
            help="Human labels: pointwise {input, output, label: pass|fail, category?} or "
            "pairwise {input, output_1, output_2, label: 1|2} (JSONL or a JSON list)."
        ),
    ],
    format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    resamples: Annotated[
        int, typer.Option(min=1, help="Bootstrap resamples for kappa's interval.")
    ] = 2000,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap, for a reproducible interval.")
    ] = 0,
) -> None:
    """Agreement of judgements made elsewhere with human labels of the same items.

    Prints accuracy, Cohen's kappa with a bootstrap 95% interval, the confusion matrix, the
    base rate and per-category figures. Items are matched by id when both files give every
    item one, otherwise by position. An LLMBar item whose winner changes when the two
    outputs swap places counts as the judgement `inconsistent`.
    """
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    from seatrial.judge import agreement_report, load_labels, load_predictions, match_judgements

    label_set = load_labels(labels)
    pairs = match_judgements(load_predictions(predictions, label_set.kind), label_set)
    report = agreement_report(
        [item.label for item, _ in pairs],
        [judgement.label for _, judgement in pairs],
        positive_label=label_set.positive_label,
        categories=[item.category for item, _ in pairs],
        resamples=resamples,
        seed=seed,
    )
    if format == "json":
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_text(report)
