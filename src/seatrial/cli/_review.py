"""``seatrial review``: people label the judge verdicts the review queue holds."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.table import Table

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import default_who, open_store
from seatrial.cli._options import Db, Note, Who
from seatrial.errors import InputError, RunNotFound
from seatrial.i18n import N_, counted

if TYPE_CHECKING:
    from seatrial.store import ReviewItem, Store

_ANSWERS = {"p": "pass", "pass": "pass", "f": "fail", "fail": "fail", "s": "skip", "skip": "skip"}
_QUIT = {"q", "quit"}


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def _list(items: list[ReviewItem]) -> None:
    if not items:
        console.print("the review queue is empty: nothing to label")
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in ("item", "queued", "run", "case", "why", "judge", "confidence", "category"):
        table.add_column(column, no_wrap=column in ("item", "run"))
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
    console.rule(f"item {position} of {total}: {item.id[:12]}")
    console.print(
        f"run {item.run_id}  case {item.case_id}  attempt {item.attempt}  "
        f"assertion {item.assertion_id}  category {item.category or '-'}  why {item.why}",
        markup=False,
    )
    console.print("[bold]input[/]")
    console.print(item.input, markup=False)
    console.print("[bold]reply[/]")
    console.print(item.output, markup=False)
    confidence = "" if item.confidence is None else f" (confidence {item.confidence:.2f})"
    judge = f" {item.judge_model}" if item.judge_model else ""
    console.print(f"[bold]judge{judge}[/]: {item.judge_verdict}{confidence}")
    console.print(item.judge_reason, markup=False)


def _ask(item: ReviewItem, store: Store, who: str) -> bool:
    """Label one item from the terminal; False when the person quits."""
    while True:
        answer = typer.prompt("label: [p]ass, [f]ail, [s]kip, [q]uit").strip().lower()
        if answer in _QUIT:
            return False
        if answer in _ANSWERS:
            break
        console.print("answer p, f, s or q")
    if _ANSWERS[answer] == "skip":
        return True
    label: Literal["pass", "fail"] = "pass" if _ANSWERS[answer] == "pass" else "fail"
    failure_type = None
    if label == "fail":
        failure_type = typer.prompt("failure type (empty for none)", default="").strip() or None
    note = typer.prompt("note (empty for none)", default="").strip()
    store.label_review_item(item.id, label, failure_type, note, who)
    console.print(f"labelled {item.id[:12]} {label} by {who}", markup=False)
    return True


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
) -> None:
    """Label the judge's verdicts that need a person: WARNINGs, low confidence, disagreements.

    Shows each open item (the input, the agent's reply, the judge's verdict and reason) and
    asks pass or fail, a failure type and a note; the label is stored with who gave it and
    when. Labelled items feed `seatrial judge calibrate --labels queue`.
    """
    person = who or default_who()
    with open_store(db) as store:
        if label is not None:
            item_id, verdict = label
            verdict = verdict.strip().lower()
            if verdict not in ("pass", "fail"):
                raise InputError(f"--label takes an item id and pass or fail, not {verdict!r}")
            if failure_type is not None and verdict == "pass":
                raise InputError("--failure-type goes with a fail label; drop it for a pass")
            if not person:
                raise InputError("cannot tell who labels: give --who NAME")
            done = store.label_review_item(
                item_id, "pass" if verdict == "pass" else "fail", failure_type, note, person
            )
            console.print(f"labelled {done.id} {verdict} by {person}", markup=False)
            return
        run_id = _run_id(store, run)
        items = store.review_items(status="open", run_id=run_id)
        if list_only or not items:
            _list(items)
            return
        if not person:
            raise InputError("cannot tell who labels: give --who NAME")
        for position, item in enumerate(items, start=1):
            _show(item, position, len(items))
            if not _ask(item, store, person):
                break
        left = len(store.review_items(status="open", run_id=run_id))
        console.print(f"{counted(left, 'open item')} left in the review queue")
