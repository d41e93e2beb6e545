"""``seatrial judge``: measure a judge against human labels, and calibrate it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import (
    Db,
    Judge,
    JudgeConcurrency,
    Labels,
    LabelsFile,
    Lang,
    Resamples,
    Seed,
    TextOrJson,
    chosen_format,
)
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.judge import AgreementReport, JudgeSettings, PositionalFigures
    from seatrial.store import Calibration, Store

judge_app = typer.Typer(
    help=N_("The LLM judge: how far its verdicts agree with people's."),
    no_args_is_help=True,
)
app.add_typer(judge_app, name="judge")


def _figure(value: float | None) -> str:
    return _("undefined") if value is None else f"{value:.3f}"


def _padded(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal cells (a Chinese character takes two)."""
    from rich.cells import cell_len

    return text + " " * max(width - cell_len(text), 0)


def _line(label: str, value: str) -> str:
    """One line of the figures: ``label`` in a column 12 cells wide, then ``value``."""
    return _padded(label, 12) + value


def _print_positional(figures: PositionalFigures) -> None:
    n = figures.items
    # Named as LLMBar names them, with the key of its statistics.json in brackets, so the
    # figures can be read against its published tables.
    of = _("{count} of {n}")
    rows = [
        (_("accuracy, original order"), figures.original_order_accuracy,
         of.format(count=figures.original_order_correct, n=n), "correct_False"),
        (_("accuracy, swapped order"), figures.swapped_order_accuracy,
         of.format(count=figures.swapped_order_correct, n=n), "correct_True"),
        (_("average accuracy (Acc.)"), figures.average_accuracy,
         _("mean of both"), "correct_average"),
        (_("correct on both orders"), figures.both_orders_accuracy,
         of.format(count=figures.both_orders_correct, n=n), "correct_both"),
        (_("positional agreement rate (Agr.)"), figures.positional_agreement_rate,
         of.format(count=figures.same_choice, n=n), "equal"),
    ]  # fmt: skip
    console.print(_("LLMBar's figures (each item judged in both orders of its outputs):"))
    for name, share, count, key in rows:
        console.print(
            f"  {_padded(name, 33)}{share:6.1%}  {_padded(count, 12)} ({key})", markup=False
        )


def _print_text(report: AgreementReport) -> None:
    console.print(_line(_("items"), str(report.items)))
    if report.positional is not None:
        _print_positional(report.positional)
    agreement = f"{report.agreement:.3f}"
    if report.positional is not None:
        agreement += _("  (correct on both orders)")
    console.print(_line(_("agreement"), agreement), markup=False)
    interval = report.kappa_interval
    spread = (
        _(
            "  ({confidence} CI {low} to {high}, {resamples} bootstrap resamples, seed {seed})"
        ).format(
            confidence=f"{interval.confidence:.0%}",
            low=f"{interval.low:.3f}",
            high=f"{interval.high:.3f}",
            resamples=interval.resamples,
            seed=interval.seed,
        )
        if interval is not None
        else ""
    )
    console.print(_line(_("kappa"), _figure(report.kappa) + spread), markup=False)
    share = _("  (share of human labels {label})").format(label=repr(report.positive_label))
    console.print(_line(_("base rate"), f"{report.base_rate:.3f}{share}"))
    matrix = Table(title=_("confusion (rows: people, columns: judge)"), title_justify="left")
    matrix.add_column("")
    for label in report.confusion.labels:
        matrix.add_column(label, justify="right")
    for label, row in zip(report.confusion.labels, report.confusion.counts, strict=True):
        matrix.add_row(label, *(str(count) for count in row))
    console.print(matrix)
    if report.categories:
        table = Table(title=_("per category"), title_justify="left")
        table.add_column(_("category"))
        for column in (_("items"), _("agreement"), _("kappa"), _("base rate")):
            table.add_column(column, justify="right")
        for category in report.categories:
            table.add_row(
                category.category,
                str(category.items),
                f"{category.agreement:.3f}",
                _figure(category.kappa),
                f"{category.base_rate:.3f}",
            )
        console.print(table)
    from seatrial.i18n import render

    said = [*report.said, *[None] * (len(report.notes) - len(report.said))]
    for note, message in zip(report.notes, said, strict=True):
        console.print(_("note: {note}").format(note=render(message, note)), markup=False)


@judge_app.command()
@guarded
def agreement(
    predictions: Annotated[
        Path,
        typer.Option(
            help=N_("The judge's labels: {id?, label} JSONL, or an LLMBar evaluator .result.json.")
        ),
    ],
    labels: LabelsFile,
    format: TextOrJson = "text",
    resamples: Resamples = 2000,
    seed: Seed = 0,
    lang: Lang = None,
) -> None:
    """Agreement of judgements made elsewhere with human labels of the same items.

    Prints accuracy, Cohen's kappa with a 95% bootstrap interval, the confusion matrix, the
    base rate and per-category figures. Items are matched by id when both files give every
    item one, otherwise by position. An LLMBar item whose winner changes when the two
    outputs swap places counts as the judgement `inconsistent`; for LLMBar result files
    (the judge's choice in both orders) it also prints LLMBar's own figures: accuracy in
    each order, their mean (average accuracy), correct on both orders, and the positional
    agreement rate.
    """
    chosen_format(format)
    from seatrial.judge import agreement_report, load_labels, load_predictions, match_judgements

    speak_reader_language(lang, project())
    label_set = load_labels(labels)
    pairs = match_judgements(load_predictions(predictions, label_set.kind), label_set)
    orders = [judgement.orders for _, judgement in pairs]
    report = agreement_report(
        [item.label for item, _ in pairs],
        [judgement.label for _, judgement in pairs],
        positive_label=label_set.positive_label,
        categories=[item.category for item, _ in pairs],
        resamples=resamples,
        seed=seed,
        # Per-order figures need both choices of every item; a file with one label per item
        # keeps the single agreement figure.
        orders=[o for o in orders if o is not None] if None not in orders else None,
    )
    if format == "json":
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_text(report)


async def _calibrate(
    labels: str, judge_model: str | None, prompt: str | None, store: Store, concurrency: int,
    resamples: int, seed: int,
) -> tuple[Calibration, AgreementReport, JudgeSettings]:  # fmt: skip
    from seatrial.gateway import Gateway
    from seatrial.judge import Judge, queue_items, read_labelled_items
    from seatrial.judge import calibrate as run_calibration
    from seatrial.store import QUEUE_SOURCE

    config = project()
    updates: dict[str, object] = {}
    if judge_model is not None:
        updates["model"] = judge_model
    if prompt is not None:
        updates["prompt_version"] = prompt
    settings = config.judge.model_copy(update=updates)
    labelled = (
        queue_items(store.labels(source=QUEUE_SOURCE))
        if labels == "queue"
        else read_labelled_items(Path(labels))
    )
    gateway_config = config.gateway_config()
    # A calibration measures the model as it answers today: a cached verdict would hide drift.
    fresh = gateway_config.cache.model_copy(update={"judge": False})
    gateway = Gateway(
        gateway_config.model_copy(update={"cache": fresh}),
        store=store,
        project_dir=config.project_dir,
    )
    try:
        judge = Judge(gateway, settings)
        calibration, report = await run_calibration(
            judge, labelled, concurrency=concurrency, resamples=resamples, seed=seed
        )
    finally:
        await gateway.aclose()
    return calibration, report, settings


@judge_app.command()
@guarded
def calibrate(
    labels: Labels,
    judge: Judge = None,
    prompt: Annotated[
        str | None, typer.Option(help=N_("Prompt version, e.g. v1; default judge.prompt_version."))
    ] = None,
    concurrency: JudgeConcurrency = 8,
    format: TextOrJson = "text",
    resamples: Resamples = 2000,
    seed: Seed = 0,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Run the judge over human-labelled items, store how far it agrees, and say if it gates.

    Pointwise items are judged PASS/FAIL (a WARNING counts as a disagreement), pairwise ones
    by which output is better. The result is stored keyed on (judge model, prompt hash); a
    judge's FAIL fails runs only once its latest calibration reaches judge.min_agreement on
    at least judge.min_labels items. Prints an ALARM when it met that bar last time and no
    longer does.
    """
    import asyncio

    from seatrial.judge import calibration_alarm, meets_bar

    chosen_format(format)
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        calibration, report, settings = asyncio.run(
            _calibrate(labels, judge, prompt, store, concurrency, resamples, seed)
        )
        previous = store.latest_calibration(calibration.judge_model, calibration.prompt_hash)
        store.save_calibration(calibration)
    alarm = calibration_alarm(previous, calibration, settings.min_agreement, settings.min_labels)
    gates = meets_bar(calibration, settings.min_agreement, settings.min_labels)
    if format == "json":
        typer.echo(
            json.dumps(
                {**calibration.model_dump(mode="json"), "gates": gates, "alarm": alarm},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        judged = _("{model}  prompt {version} (hash {hash})").format(
            model=calibration.judge_model,
            version=calibration.prompt_version,
            hash=calibration.prompt_hash[:12],
        )
        console.print(_line(_("judge"), judged), markup=False)
        _print_text(report)
        bar = _("judge.min_agreement {share} on at least {count} items").format(
            share=f"{settings.min_agreement:.0%}", count=settings.min_labels
        )
        if gates:
            said = _("calibrated: its FAIL verdicts fail runs ({bar})")
        else:
            said = _("not calibrated: its FAIL verdicts stay advisory WARNINGs (needs {bar})")
        console.print(_line(_("gate"), said.format(bar=bar)))
    if alarm is not None:
        err_console.print(f"[bold red]{escape(alarm)}[/]", highlight=False)
