"""``seatrial datasets``: golden sets, their versions, import and export, composition checks."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import (
    default_who,
    open_store,
    speak_reader_language,
    store_settings,
)
from seatrial.cli._options import Db, Lang, Note, Reason, TextOrJson, Who, chosen_format
from seatrial.i18n import N_, ngettext, pgettext, use_language
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.dataset import CompositionWarning
    from seatrial.store import GoldenSnapshot, Store

datasets_app = typer.Typer(
    help=N_("Golden sets: named, versioned, append-only sets of cases that runs record."),
    no_args_is_help=True,
)
app.add_typer(datasets_app, name="datasets")

RefArgument = Annotated[
    str, typer.Argument(metavar="NAME[@V]", help=N_("A golden set, at version V (default newest)."))
]
NameArgument = Annotated[str, typer.Argument(metavar="NAME", help=N_("The golden set's name."))]
CategoryOption = Annotated[
    list[str] | None,
    typer.Option(
        "--category",
        help=N_(
            "A category the set should cover (repeatable); every category the set ever had "
            "is expected too."
        ),
    ),
]


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def _snapshot(store: Store, ref: str) -> GoldenSnapshot:
    from seatrial.dataset import parse_dataset_ref

    name, version = parse_dataset_ref(ref)
    return store.golden_snapshot(name, version)


def _warnings(
    store: Store, snapshot: GoldenSnapshot, categories: list[str] | None
) -> list[CompositionWarning]:
    from seatrial.dataset import composition

    expected = [*store.golden_categories(snapshot.dataset, snapshot.version), *(categories or [])]
    return composition(snapshot.cases, categories=expected)


def _print_warnings(warnings: list[CompositionWarning]) -> None:
    if not warnings:
        console.print(_("[green]composition: every requirement met[/]"))
        return
    for warning in warnings:
        console.print(
            _("[yellow]warning:[/] {message}").format(message=escape(warning.message)),
            highlight=False,
        )


def _cases(count: int) -> str:
    return ngettext("{count} case", "{count} cases", count).format(count=count)


def _store(db: str | None, lang: str | None) -> Store:
    """The store, once the rest of the command speaks the reader's language (``--lang``)."""
    settings = store_settings()
    speak_reader_language(lang, settings)
    return open_store(db, settings)


@datasets_app.command("list")
@guarded
def list_sets(format: TextOrJson = "text", db: Db = None, lang: Lang = None) -> None:
    """List the golden sets with their newest version and active cases."""
    chosen_format(format)
    with _store(db, lang) as store:
        newest = [store.golden_versions(name)[-1] for name in store.golden_names()]
    if format == "json":
        typer.echo(
            json.dumps([v.model_dump(mode="json") for v in newest], indent=2, ensure_ascii=False)
        )
        return
    if not newest:
        console.print(
            _("no golden sets yet; `seatrial datasets import NAME FILE` creates one"),
            markup=False,
        )
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in (
        pgettext("datasets column", "name"),
        pgettext("datasets column", "version"),
        pgettext("datasets column", "cases"),
        pgettext("datasets column", "changed"),
        pgettext("datasets column", "by"),
    ):
        table.add_column(column)
    for version in newest:
        table.add_row(
            escape(version.dataset),
            f"v{version.version}",
            str(version.cases),
            _when(version.created_at),
            escape(version.who),
        )
    console.print(table)


@datasets_app.command()
@guarded
def show(
    ref: RefArgument,
    category: CategoryOption = None,
    format: TextOrJson = "text",
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Show a golden set at a version: its cases, versions and composition warnings."""
    from dataclasses import asdict

    chosen_format(format)
    with _store(db, lang) as store:
        snapshot = _snapshot(store, ref)
        versions = store.golden_versions(snapshot.dataset)
        if format == "json":  # the JSON is unchanged whatever the reader's language
            with use_language("en"):
                warnings = _warnings(store, snapshot, category)
        else:
            warnings = _warnings(store, snapshot, category)
    if format == "json":
        document = {
            **snapshot.model_dump(mode="json", exclude_none=True),
            "versions": len(versions),
            "warnings": [asdict(warning) for warning in warnings],
        }
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    cases = ngettext("{count} case", "{count} cases", len(snapshot.cases))
    console.print(
        _("[bold]{name}[/] v{version} of {versions}: {cases}, {retired} retired").format(
            name=escape(snapshot.dataset),
            version=snapshot.version,
            versions=len(versions),
            cases=cases.format(count=len(snapshot.cases)),
            retired=len(snapshot.retired),
        ),
        highlight=False,
    )
    table = Table(show_edge=False, pad_edge=False)
    for column in (
        pgettext("datasets column", "case"),
        pgettext("datasets column", "priority"),
        pgettext("datasets column", "type"),
        pgettext("datasets column", "category"),
        pgettext("datasets column", "turns"),
    ):
        table.add_column(column)
    for case in snapshot.cases:
        table.add_row(
            escape(case.id),
            case.priority,
            case.kind,
            escape(case.category or "-"),
            escape(case.user_turns[0][:60]),
        )
    console.print(table)
    for case_id, reason in snapshot.retired.items():
        console.print(
            _("retired {case_id}: {reason}").format(case_id=case_id, reason=reason),
            markup=False,
            highlight=False,
        )
    _print_warnings(warnings)


@datasets_app.command()
@guarded
def history(
    name: NameArgument, format: TextOrJson = "text", db: Db = None, lang: Lang = None
) -> None:
    """List a golden set's versions: when, who, what changed and why."""
    chosen_format(format)
    with _store(db, lang) as store:
        versions = store.golden_versions(name)
        if not versions:
            store.golden_snapshot(name)  # says which sets exist
    if format == "json":
        typer.echo(
            json.dumps([v.model_dump(mode="json") for v in versions], indent=2, ensure_ascii=False)
        )
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in (
        pgettext("datasets column", "version"),
        pgettext("datasets column", "when"),
        pgettext("datasets column", "who"),
        pgettext("datasets column", "added"),
        pgettext("datasets column", "retired"),
        pgettext("datasets column", "cases"),
        pgettext("datasets column", "note"),
    ):
        table.add_column(column)
    for v in versions:
        table.add_row(
            f"v{v.version}",
            _when(v.created_at),
            escape(v.who),
            str(v.added),
            str(v.retired),
            str(v.cases),
            escape(v.note),
        )
    console.print(table)


@datasets_app.command("import")
@guarded
def import_file(
    name: NameArgument,
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help=N_("A suite file: YAML, JSON, JSONL or XLSX."))
    ],
    note: Note = "",
    who: Who = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Add the cases of FILE to golden set NAME as a new version (an existing id with a new
    definition is an edit); cases the file leaves out stay."""
    from seatrial.dataset import import_golden

    with _store(db, lang) as store:
        before = store.golden_versions(name)
        version = import_golden(store, name, file, who=who or default_who(), note=note)
        snapshot = store.golden_snapshot(name, version)
        warnings = _warnings(store, snapshot, None)
    if before and before[-1].version == version:
        console.print(
            _("{name}: no changes, still v{version}").format(name=name, version=version),
            markup=False,
        )
    else:
        console.print(
            _("{name} v{version}: {cases}").format(
                name=name, version=version, cases=_cases(len(snapshot.cases))
            ),
            markup=False,
            highlight=False,
        )
    _print_warnings(warnings)


@datasets_app.command()
@guarded
def export(
    ref: RefArgument,
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help=N_("Where to write: .jsonl, .yaml or .xlsx."))
    ],
    lossy: Annotated[
        bool,
        typer.Option(
            "--lossy", help=N_("Write .xlsx even when its columns cannot hold every case's fields.")
        ),
    ] = False,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Write a golden set's cases at a version to FILE; importing it gives the same cases."""
    from seatrial.dataset import export_golden

    with _store(db, lang) as store:
        snapshot = _snapshot(store, ref)
    losses = export_golden(snapshot, file, lossy=lossy)
    for loss in losses:
        err_console.print(
            _("[yellow]lost in Excel:[/] {loss}").format(loss=escape(loss)), highlight=False
        )
    console.print(
        _("wrote {cases} of {ref} to {file}").format(
            cases=_cases(len(snapshot.cases)), ref=snapshot.ref, file=file
        ),
        markup=False,
        highlight=False,
    )


@datasets_app.command()
@guarded
def retire(
    name: NameArgument,
    case_id: Annotated[str, typer.Argument(metavar="CASE_ID", help=N_("The case to retire."))],
    reason: Reason,
    who: Who = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Retire a case from a golden set with a reason, as a new version (older versions keep
    it)."""
    with _store(db, lang) as store:
        version = store.golden_append(
            name, retire={case_id: reason}, who=who or default_who(), note=reason
        )
    console.print(
        _("{name} v{version}: retired {case_id}").format(
            name=name, version=version, case_id=case_id
        ),
        markup=False,
        highlight=False,
    )


@datasets_app.command()
@guarded
def check(
    ref: RefArgument, category: CategoryOption = None, db: Db = None, lang: Lang = None
) -> None:
    """Check a golden set against the requirements (P0 and multi-turn shares, anti-
    hallucination cases, categories without cases); warnings only, exit 0."""
    with _store(db, lang) as store:
        snapshot = _snapshot(store, ref)
        warnings = _warnings(store, snapshot, category)
    shown = _("{ref}: {cases}").format(ref=snapshot.ref, cases=_cases(len(snapshot.cases)))
    console.print(shown, markup=False, highlight=False)
    _print_warnings(warnings)


@datasets_app.command()
@guarded
def verify(
    name: Annotated[
        str | None,
        typer.Argument(metavar="[NAME]", help=N_("The golden set to verify (default: every set).")),
    ] = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Recompute every version's hash and the chain linking them; name each row changed in
    the database since Seatrial wrote it. Exit 1 when one was."""
    with _store(db, lang) as store:
        names = [name] if name is not None else store.golden_names()
        if name is not None and not store.golden_versions(name):
            store.golden_snapshot(name)  # says which sets exist
        results = [(each, store.golden_versions(each), store.golden_verify(each)) for each in names]
    if not results:
        console.print(_("no golden sets yet; nothing to verify"), markup=False)
        return
    broken = False
    for each, versions, problems in results:
        if not problems:
            console.print(
                _("[green]{name}: v1 to v{version} verified[/] (head {head})").format(
                    name=escape(each),
                    version=versions[-1].version,
                    head=escape((versions[-1].content_hash or "")[:12]),
                ),
                highlight=False,
            )
            continue
        broken = True
        for problem in problems:
            err_console.print(
                _("[red]changed:[/] {problem}").format(problem=escape(problem.message)),
                highlight=False,
            )
    if broken:
        err_console.print(
            _(
                "the history above was changed in the database, not by Seatrial; restore "
                "those rows from a backup, or run the versions that verify"
            ),
            markup=False,
        )
        raise typer.Exit(1)
