"""``seatrial run``: parse the options, run the suite through the library's front door
(:func:`seatrial.execute_suite_async`), print the summary, exit with the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import project, speak_reader_language
from seatrial.cli._options import (
    Agent,
    Baseline,
    Concurrency,
    Dataset,
    Db,
    Gateway,
    Judge,
    Lang,
    Repeats,
    ReportDir,
    Tags,
    Timeout,
)
from seatrial.cli._output import print_notice
from seatrial.errors import InputError
from seatrial.i18n import N_


@app.command()
@guarded
def run(
    suite_path: Annotated[
        Path | None, typer.Argument(metavar="SUITE", help=N_("Suite file (YAML, JSONL, XLSX)."))
    ] = None,
    agent: Agent = None,
    repeats: Repeats = None,
    concurrency: Concurrency = None,
    timeout: Timeout = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help=N_("Processes sharing the attempts (default 1; one per core).")),
    ] = None,
    tag: Tags = None,
    db: Db = None,
    report_dir: ReportDir = None,
    resume: Annotated[
        str | None, typer.Option(metavar="RUN_ID", help=N_("Finish an interrupted run."))
    ] = None,
    gateway: Gateway = False,
    gates: Annotated[
        Path | None,
        typer.Option(
            "--gates",
            metavar="FILE",
            help=N_(
                "Release gates for this run (else the suite's `gates:`, else seatrial.yaml's); "
                "stored with the run when it starts. With no gate written anywhere, every case "
                "must pass."
            ),
        ),
    ] = None,
    baseline: Baseline = None,
    judge: Judge = None,
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            metavar="local|celery",
            help=N_(
                "Where attempts run: this machine (local), or Celery workers started with "
                "`seatrial worker` (celery; broker: $SEATRIAL_BROKER_URL)."
            ),
        ),
    ] = "local",
    dataset: Dataset = None,
    lang: Lang = None,
) -> None:
    """Run SUITE against an agent; exit 0 when the gate is met, 1 when not, 2 on bad input."""
    import asyncio

    from seatrial._execute import default_options, execute_suite_async
    from seatrial.i18n import gettext as _
    from seatrial.report import print_summary
    from seatrial.run import new_run_id, progress_for

    config = project()
    speak_reader_language(lang, config)
    if resume is None and suite_path is None and dataset is None:
        raise InputError(_("give a SUITE file, --dataset NAME, or --resume RUN_ID"))
    if backend not in ("local", "celery"):
        raise InputError(_("--backend {backend}: choose local or celery").format(backend=backend))
    options = default_options(
        config,
        repeats=repeats,
        tags=tag or [],
        concurrency=concurrency,
        timeout_s=timeout,
        workers=workers,
        # Chosen here so that an interrupted run can be named for --resume.
        run_id=new_run_id() if resume is None else None,
    )
    try:
        result = asyncio.run(
            execute_suite_async(
                suite_path if resume is None else None,
                agent,
                resume=resume,
                config=config,
                options=options,
                gates=gates,
                baseline=baseline,
                judge=judge,
                gateway=gateway,
                dataset=dataset,
                db=db,
                report_dir=report_dir,
                progress=progress_for(console),
                with_attempts=False,  # the summary and files need no attempt in memory
                on_notice=print_notice,
                backend="celery" if backend == "celery" else "local",
            )
        )
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM
        command = f"seatrial run --resume {options.run_id or resume}" + (
            " --backend celery" if backend == "celery" else ""
        )
        err_console.print(
            _(
                "[yellow]interrupted:[/] finished attempts are stored; continue with `{command}`"
            ).format(command=command),
            highlight=False,
        )
        raise typer.Exit(130) from None
    print_summary(result.report, console)
    paths = ", ".join(str(p) for p in result.report_files)
    console.print(_("reports: {paths}").format(paths=paths))
    if result.interrupted:
        console.print(
            _("[yellow]run interrupted[/]: resume with `seatrial run --resume {run_id}`").format(
                run_id=result.run_id
            )
        )
    raise typer.Exit(result.exit_code)
