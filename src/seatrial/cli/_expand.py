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
from seatrial.cli._context import default_who, open_store, project, speak_reader_language
from seatrial.cli._options import (
    DatasetFilter,
    Db,
    ExpandDataset,
    JoinDataset,
    Lang,
    Note,
    Reason,
    SuiteFile,
    TextOrJson,
    Who,
    chosen_format,
)
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.case import Case
    from seatrial.dataset import Expansion
    from seatrial.store import PendingCase, Store

SHOWN_CHARS = 80
"""Characters of a case's user turns shown in a table row."""

PENDING_COLUMNS = (
    N_("pending id"),
    N_("case"),
    N_("kind"),
    N_("parent"),
    N_("dataset"),
    N_("status"),
    N_("user turns"),
)
"""The columns of the pending cases' table (translated with the ``pending column`` context)."""


def _parent(store: Store, case_id: str, suite: Path | None, dataset: str | None) -> Case:
    """The case to expand: from the suite file, else from the golden set's newest version."""
    from seatrial.case import load_suite

    if suite is not None:
        cases = load_suite(suite).cases
        where = str(suite)
    elif dataset is not None:
        cases = store.golden_snapshot(dataset).cases
        where = _("golden set {name!r}").format(name=dataset)
    else:
        raise InputError(_("say where the case is: --suite FILE, or --dataset NAME (a golden set)"))
    for case in cases:
        if case.id == case_id:
            return case
    known = ", ".join(case.id for case in cases[:20]) + (", ..." if len(cases) > 20 else "")
    raise InputError(
        _("no case {case_id!r} in {where} (its cases: {known})").format(
            case_id=case_id, where=where, known=known or _("none")
        )
    )


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
        known = ", ".join(sorted(config.models)) or _("none configured")
        raise ConfigError(
            _(
                "say which model writes the variants: --model NAME, a name under models: of "
                "seatrial.yaml (known: {known})"
            ).format(known=known)
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


def _status_word(status: str) -> str:
    words = {
        "pending": pgettext("pending status", "pending"),
        "approved": pgettext("pending status", "approved"),
        "rejected": pgettext("pending status", "rejected"),
    }
    return words.get(status, status)


def _pending_table(items: list[PendingCase]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in PENDING_COLUMNS:
        table.add_column(pgettext("pending column", column), no_wrap=column != "user turns")
    for item in items:
        table.add_row(
            item.id[:12],
            escape(item.case.id),
            item.kind,
            escape(item.parent_case_id or "-"),
            escape(item.dataset or "-"),
            _status_word(item.status) + (f" v{item.version}" if item.version else ""),
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
    lang: Lang = None,
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
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
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
    made = ngettext("{n} pending case", "{n} pending cases", len(items)).format(n=len(items))
    console.print(
        _("{made} from {parent} by {model}; {dropped} dropped").format(
            made=made,
            parent=escape(parent.id),
            model=escape(expansion.model),
            dropped=len(expansion.dropped),
        ),
        highlight=False,
    )
    if items:
        console.print(_pending_table(items))
    for text, reason in expansion.dropped:
        shown = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
        console.print(
            "  " + _("dropped: {text!r}: {reason}").format(text=shown, reason=reason),
            markup=False,
            highlight=False,
        )
    if items:
        target = f" --dataset {dataset}" if dataset else " --dataset NAME"
        console.print(
            _(
                "next: seatrial cases approve ID...{target}, or --all{target}; "
                "seatrial cases reject ID... --reason WHY"
            ).format(target=target),
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
    lang: Lang = None,
) -> None:
    """List generated cases waiting for a person (or decided ones), oldest first."""
    from seatrial.store import PENDING_STATUSES

    chosen_format(format)
    config = project()
    speak_reader_language(lang, config)
    if status != "all" and status not in PENDING_STATUSES:
        raise InputError(
            _("--status is one of {statuses} or all, not {status!r}").format(
                statuses=", ".join(PENDING_STATUSES), status=status
            )
        )
    with open_store(db, config) as store:
        items = store.pending_cases(status=None if status == "all" else status, dataset=dataset)
    if format == "json":
        typer.echo(json.dumps([_as_json(item) for item in items], indent=2, ensure_ascii=False))
        return
    if not items:
        empty = {
            "all": _("no cases"),
            "pending": _("no pending cases"),
            "approved": _("no approved cases"),
            "rejected": _("no rejected cases"),
        }
        console.print(empty.get(status, empty["all"]), markup=False)
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
                _(
                    "{ref!r} names {count} pending cases; give more of the id "
                    "(`seatrial cases pending` lists them)"
                ).format(ref=ref, count=len(matches))
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
    lang: Lang = None,
) -> None:
    """Approve pending cases: one new version of the golden set holds them all."""

    config = project()
    speak_reader_language(lang, config)
    person = who or default_who()  # none at all: the store refuses, saying so
    with open_store(db, config) as store:
        if all_:
            if ids:
                raise InputError(_("give pending ids or --all, not both"))
            if dataset is None:
                raise InputError(
                    _("--all needs --dataset NAME: the golden set whose cases to approve")
                )
            chosen = [item.id for item in store.pending_cases(status="pending", dataset=dataset)]
            if not chosen:
                console.print(
                    _("no pending cases for {dataset}; nothing approved").format(dataset=dataset),
                    markup=False,
                )
                return
        else:
            chosen = _resolve(store, ids or [], dataset)
        version = store.approve_pending(chosen, who=person, dataset=dataset, note=note)
        target = dataset or store.pending_case(chosen[0]).dataset
    console.print(
        ngettext(
            "approved {n} case into {target}: version {version} "
            "(run it with --dataset {target}@{version})",
            "approved {n} cases into {target}: version {version} "
            "(run it with --dataset {target}@{version})",
            len(chosen),
        ).format(n=len(chosen), target=target, version=version),
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
    lang: Lang = None,
) -> None:
    """Reject pending cases with a reason; they never join a golden set."""

    config = project()
    speak_reader_language(lang, config)
    person = who or default_who()
    with open_store(db, config) as store:
        chosen = _resolve(store, ids, None)
        store.reject_pending(chosen, who=person, reason=reason)
    console.print(
        ngettext("rejected {n} case: {reason}", "rejected {n} cases: {reason}", len(chosen)).format(
            n=len(chosen), reason=reason
        ),
        markup=False,
    )
