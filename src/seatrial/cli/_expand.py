"""``seatrial cases expand`` and the approval queue of generated cases.

``expand`` asks a model for variants of one case and stores them as pending; ``pending``
lists them; ``approve`` adds them to a new version of a golden set; ``reject`` drops them
with a reason. No run uses a pending case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import cases_app, console, guarded
from seatrial.cli._context import default_who, open_store, project
from seatrial.cli._options import (
    DatasetFilter,
    Db,
    ExpandDataset,
    JoinDataset,
    Note,
    Reason,
    SuiteFile,
    TextOrJson,
    Who,
    chosen_format,
)
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import N_, counted

if TYPE_CHECKING:
    from seatrial.case import Case
    from seatrial.dataset import Expansion
    from seatrial.store import PendingCase, Store

SHOWN_CHARS = 80
"""Characters of a case's user turns shown in a table row."""


def _parent(store: Store, case_id: str, suite: Path | None, dataset: str | None) -> Case:
    """The case to expand: from the suite file, else from the golden set's newest version."""
    from seatrial.case import load_suite

    if suite is not None:
        cases = load_suite(suite).cases
        where = str(suite)
    elif dataset is not None:
        cases = store.golden_snapshot(dataset).cases
        where = f"golden set {dataset!r}"
    else:
        raise InputError("say where the case is: --suite FILE, or --dataset NAME (a golden set)")
    for case in cases:
        if case.id == case_id:
            return case
    known = ", ".join(case.id for case in cases[:20]) + (", ..." if len(cases) > 20 else "")
    raise InputError(f"no case {case_id!r} in {where} (its cases: {known or 'none'})")


def _made_before(store: Store, dataset: str | None) -> tuple[list[Case], set[str]]:
    """Cases made before (pending ones of any status, the golden set's), and the ids of the
    set's retired cases: new variants neither repeat their text nor reuse their ids."""
    cases = [item.case for item in store.pending_cases(status=None)]
    retired: set[str] = set()
    if dataset is not None and dataset in store.golden_names():
        snapshot = store.golden_snapshot(dataset)
        cases += snapshot.cases
        retired = set(snapshot.retired)
    return cases, retired


async def _expand(
    store: Store, case: Case, model: str | None, n: int, kinds: list[str], dataset: str | None
) -> Expansion:
    from seatrial.dataset import expand_case
    from seatrial.gateway import Gateway

    config = project()
    if model is None:
        known = ", ".join(sorted(config.models)) or "none configured"
        raise ConfigError(
            f"say which model writes the variants: --model NAME, a name under models: of "
            f"seatrial.yaml (known: {known})"
        )
    existing, retired = _made_before(store, dataset)
    gateway = Gateway(config.gateway_config(), store=store, project_dir=config.project_dir)
    try:
        return await expand_case(
            case, gateway, model=model, n=n, kinds=kinds, taken=retired, existing=existing
        )
    finally:
        await gateway.aclose()


def _turns(case: Case) -> str:
    text = " / ".join(case.user_turns)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _pending_table(items: list[PendingCase]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("pending id", "case", "kind", "parent", "dataset", "status", "user turns"):
        table.add_column(column, no_wrap=column != "user turns")
    for item in items:
        table.add_row(
            item.id[:12],
            escape(item.case.id),
            item.kind,
            escape(item.parent_case_id or "-"),
            escape(item.dataset or "-"),
            item.status + (f" v{item.version}" if item.version else ""),
            escape(_turns(item.case)),
        )
    return table


def _as_json(item: PendingCase) -> dict[str, object]:
    return item.model_dump(mode="json")


@cases_app.command()
@guarded
def expand(
    case_id: Annotated[
        str, typer.Argument(metavar="CASE", help=N_("The id of the case to expand."))
    ],
    suite: SuiteFile = None,
    dataset: ExpandDataset = None,
    n: Annotated[int, typer.Option("--n", min=1, help=N_("How many variants to ask for."))] = 20,
    model: Annotated[
        str | None,
        typer.Option(
            help=N_("The model that writes them: a name under models:."), show_default=False
        ),
    ] = None,
    kinds: Annotated[
        str,
        typer.Option(
            help=N_(
                "Comma-separated: paraphrase (colloquial, regional, typos, terse), "
                "adversarial (prompt_injection, over_long_input, tool_abuse_bait, "
                "system_prompt_extraction), or single styles."
            )
        ),
    ] = "paraphrase,adversarial",
    format: TextOrJson = "text",
    db: Db = None,
) -> None:
    """Ask a model for variants of a case's user turns; store them as pending cases.

    Paraphrases say the same thing the ways users do; adversarial variants wrap the request
    in an attack and keep only the assertions that forbid something. Near-duplicates are
    dropped by embedding similarity. No run uses a pending case until `seatrial cases
    approve` adds it to a golden set.
    """
    import asyncio

    from seatrial.store import PendingCase

    chosen_format(format)
    with open_store(db) as store:
        parent = _parent(store, case_id, suite, dataset)
        expansion = asyncio.run(_expand(store, parent, model, n, kinds.split(","), dataset))
        items = [
            PendingCase(
                dataset=dataset or "",
                case=case,
                origin="expand",
                kind=str(case.metadata.get("kind", "")),
                parent_case_id=parent.id,
                model=expansion.model,
            )
            for case in expansion.kept
        ]
        store.add_pending(items)
    if format == "json":
        dropped = [{"text": text, "reason": reason} for text, reason in expansion.dropped]
        document = {"pending": [_as_json(item) for item in items], "dropped": dropped}
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    console.print(
        f"{counted(len(items), 'pending case')} from {escape(parent.id)} by "
        f"{escape(expansion.model)}; "
        f"{len(expansion.dropped)} dropped",
        highlight=False,
    )
    if items:
        console.print(_pending_table(items))
    for text, reason in expansion.dropped:
        shown = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
        console.print(f"  dropped: {shown!r}: {reason}", markup=False, highlight=False)
    if items:
        target = f" --dataset {dataset}" if dataset else " --dataset NAME"
        console.print(
            f"next: seatrial cases approve ID...{target}, or --all{target}; "
            "seatrial cases reject ID... --reason WHY",
            markup=False,
        )


@cases_app.command()
@guarded
def pending(
    dataset: DatasetFilter = None,
    status: Annotated[
        str, typer.Option(help=N_("pending, approved, rejected or all."))
    ] = "pending",
    format: TextOrJson = "text",
    db: Db = None,
) -> None:
    """List generated cases waiting for a person (or decided ones), oldest first."""
    from seatrial.store import PENDING_STATUSES

    chosen_format(format)
    if status != "all" and status not in PENDING_STATUSES:
        raise InputError(f"--status is one of {', '.join(PENDING_STATUSES)} or all, not {status!r}")
    with open_store(db) as store:
        items = store.pending_cases(status=None if status == "all" else status, dataset=dataset)
    if format == "json":
        typer.echo(json.dumps([_as_json(item) for item in items], indent=2, ensure_ascii=False))
        return
    if not items:
        console.print(f"no {'' if status == 'all' else status + ' '}cases", markup=False)
        return
    console.print(_pending_table(items))


def _resolve(store: Store, refs: list[str], dataset: str | None) -> list[str]:
    """Full pending ids for ``refs``: an id, a unique prefix of one, or a case id, among the
    undecided cases."""
    waiting = store.pending_cases(status="pending", dataset=None)
    ids: list[str] = []
    for ref in refs:
        exact = [item.id for item in waiting if item.id == ref]
        matches = exact or [
            item.id
            for item in waiting
            if item.id.startswith(ref)
            or (item.case.id == ref and (dataset is None or item.dataset in (dataset, "")))
        ]
        if len(matches) > 1:
            raise InputError(
                f"{ref!r} names {len(matches)} pending cases; give more of the id "
                "(`seatrial cases pending` lists them)"
            )
        ids.append(matches[0] if matches else ref)  # an unknown id: the store says so
    return ids


@cases_app.command()
@guarded
def approve(
    ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ID...", help=N_("Pending ids (or unique prefixes, or the cases' ids).")
        ),
    ] = None,
    all_: Annotated[
        bool, typer.Option("--all", help=N_("Every pending case meant for --dataset."))
    ] = False,
    dataset: JoinDataset = None,
    note: Note = "",
    who: Who = None,
    db: Db = None,
) -> None:
    """Approve pending cases: one new version of the golden set holds them all."""

    person = who or default_who()  # none at all: the store refuses, saying so
    with open_store(db) as store:
        if all_:
            if ids:
                raise InputError("give pending ids or --all, not both")
            if dataset is None:
                raise InputError(
                    "--all needs --dataset NAME: the golden set whose cases to approve"
                )
            chosen = [item.id for item in store.pending_cases(status="pending", dataset=dataset)]
            if not chosen:
                console.print(f"no pending cases for {dataset}; nothing approved", markup=False)
                return
        else:
            chosen = _resolve(store, ids or [], dataset)
        version = store.approve_pending(chosen, who=person, dataset=dataset, note=note)
        target = dataset or store.pending_case(chosen[0]).dataset
    console.print(
        f"approved {counted(len(chosen), 'case')} into {target}: version {version} "
        f"(run it with --dataset {target}@{version})",
        markup=False,
    )


@cases_app.command()
@guarded
def reject(
    ids: Annotated[
        list[str],
        typer.Argument(
            metavar="ID...", help=N_("Pending ids (or unique prefixes, or the cases' ids).")
        ),
    ],
    reason: Reason,
    who: Who = None,
    db: Db = None,
) -> None:
    """Reject pending cases with a reason; they never join a golden set."""

    person = who or default_who()
    with open_store(db) as store:
        chosen = _resolve(store, ids, None)
        store.reject_pending(chosen, who=person, reason=reason)
    console.print(f"rejected {counted(len(chosen), 'case')}: {reason}", markup=False)
