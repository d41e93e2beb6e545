"""``seatrial review``: people label the judge verdicts the review queue holds."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.table import Table

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import default_who, open_store, project, speak_reader_language
from seatrial.cli._options import Db, Lang, Note, Who
from seatrial.errors import InputError, RunNotFound
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.store import ReviewItem, Store

_ANSWERS = {"p": "pass", "pass": "pass", "f": "fail", "fail": "fail", "s": "skip", "skip": "skip"}
_QUIT = {"q", "quit"}


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def _list(items: list[ReviewItem]) -> None:
    if not items:
        console.print(_("the review queue is empty: nothing to label"))
        return
    table = Table(show_edge=False, pad_edge=False)
    table.add_column(pgettext("review column", "item"), no_wrap=True)
    table.add_column(pgettext("review column", "queued"))
    table.add_column(pgettext("review column", "run"), no_wrap=True)
    for column in (
        pgettext("review column", "case"),
        pgettext("review column", "why"),
        pgettext("review column", "judge"),
        pgettext("review column", "confidence"),
        pgettext("review column", "category"),
    ):
        table.add_column(column)
    for item in items:
        table.add_row(
            item.id[:12],
            _when(item.created_at),
            item.run_id[:12],
            f"{item.case_id} #{item.attempt}",
            item.why,
            item.judge_verdict,
            "-" if item.confidence is None else f"{item.confidence:.2f}",
            item.category,
        )
    console.print(table)


def _show(item: ReviewItem, position: int, total: int) -> None:
    from seatrial.record import verdict_word

    console.rule(
        _("item {position} of {total}: {item}").format(
            position=position, total=total, item=item.id[:12]
        )
    )
    console.print(
        _(
            "run {run_id}  case {case_id}  attempt {attempt}  assertion {assertion}  "
            "category {category}  why {why}"
        ).format(
            run_id=item.run_id,
            case_id=item.case_id,
            attempt=item.attempt,
            assertion=item.assertion_id,
            category=item.category or "-",
            why=item.why,
        ),
        markup=False,
    )
    console.print(_("[bold]input[/]"))
    console.print(item.input, markup=False)
    console.print(_("[bold]reply[/]"))
    console.print(item.output, markup=False)
    verdict = verdict_word(item.judge_verdict)
    if item.confidence is not None:
        verdict = _("{verdict} (confidence {confidence:.2f})").format(
            verdict=verdict, confidence=item.confidence
        )
    if item.judge_model:
        line = _("[bold]judge {model}[/]: {verdict}").format(
            model=item.judge_model, verdict=verdict
        )
    else:
        line = _("[bold]judge[/]: {verdict}").format(verdict=verdict)
    console.print(line)
    console.print(item.judge_reason, markup=False)


def _ask(item: ReviewItem, store: Store, who: str) -> bool:
    """Label one item from the terminal; False when the person quits."""
    while True:
        answer = typer.prompt(_("label: [p]ass, [f]ail, [s]kip, [q]uit")).strip().lower()
        if answer in _QUIT:
            return False
        if answer in _ANSWERS:
            break
        console.print(_("answer p, f, s or q"))
    if _ANSWERS[answer] == "skip":
        return True
    label: Literal["pass", "fail"] = "pass" if _ANSWERS[answer] == "pass" else "fail"
    failure_type = None
    if label == "fail":
        failure_type = typer.prompt(_("failure type (empty for none)"), default="").strip() or None
    note = typer.prompt(_("note (empty for none)"), default="").strip()
    store.label_review_item(item.id, label, failure_type, note, who)
    console.print(_labelled(item.id[:12], label, who), markup=False)
    return True


def _labelled(item_id: str, label: str, who: str) -> str:
    said = pgettext("label", "pass") if label == "pass" else pgettext("label", "fail")
    return _("labelled {item} {label} by {who}").format(item=item_id, label=said, who=who)


def _run_id(store: Store, ref: str | None) -> str | None:
    if ref is None:
        return None
    try:
        return store.resolve_run_id(ref)
    except RunNotFound:
        # Review items outlive their run: an exact id of a run no longer stored still filters.
        return ref


@app.command()
@guarded
def review(
    run: Annotated[
        str | None,
        typer.Option(help=N_("Only items of this run (an id, a unique prefix, or `latest`).")),
    ] = None,
    list_only: Annotated[
        bool, typer.Option("--list", help=N_("List the open items and stop; label nothing."))
    ] = False,
    label: Annotated[
        tuple[str, str] | None,
        typer.Option(
            metavar="ITEM VERDICT",
            help=N_("Label one item without prompting: its id (or a unique prefix) and pass|fail."),
        ),
    ] = None,
    failure_type: Annotated[
        str | None, typer.Option(help=N_("With --label ... fail: the failure type."))
    ] = None,
    note: Note = "",
    who: Who = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Label the judge's verdicts that need a person: WARNINGs, low confidence, disagreements.

    Shows each open item (the input, the agent's reply, the judge's verdict and reason) and
    asks pass or fail, a failure type and a note; the label is stored with who gave it and
    when. Labelled items feed `seatrial judge calibrate --labels queue`.
    """
    person = who or default_who()
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        if label is not None:
            item_id, verdict = label
            verdict = verdict.strip().lower()
            if verdict not in ("pass", "fail"):
                raise InputError(
                    _("--label takes an item id and pass or fail, not {verdict}").format(
                        verdict=repr(verdict)
                    )
                )
            if failure_type is not None and verdict == "pass":
                raise InputError(_("--failure-type goes with a fail label; drop it for a pass"))
            if not person:
                raise InputError(_("cannot tell who labels: give --who NAME"))
            done = store.label_review_item(
                item_id, "pass" if verdict == "pass" else "fail", failure_type, note, person
            )
            console.print(_labelled(done.id, verdict, person), markup=False)
            return
        run_id = _run_id(store, run)
        items = store.review_items(status="open", run_id=run_id)
        if list_only or not items:
            _list(items)
            return
        if not person:
            raise InputError(_("cannot tell who labels: give --who NAME"))
        for position, item in enumerate(items, start=1):
            _show(item, position, len(items))
            if not _ask(item, store, person):
                break
        left = len(store.review_items(status="open", run_id=run_id))
        remaining = ngettext(
            "{count} open item left in the review queue",
            "{count} open items left in the review queue",
            left,
        )
        console.print(remaining.format(count=left))
