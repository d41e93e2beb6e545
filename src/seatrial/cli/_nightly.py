"""``seatrial nightly``: every suite of seatrial.yaml, probes first, with a drift alarm per
probe; exit 1 on any alarm or unmet gate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import Agent, Baseline, Db, Lang
from seatrial.cli._output import print_drift, print_notice, send_drift_alert
from seatrial.errors import ConfigError, RunNotFound
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext

if TYPE_CHECKING:
    from seatrial.case import Suite
    from seatrial.config import Config
    from seatrial.store import Store

NIGHTLY_TAG = "nightly"
"""Every run ``seatrial nightly`` starts carries this tag."""


def suite_files(config: Config) -> list[Path]:
    """``suites:`` of seatrial.yaml as files (:meth:`seatrial.config.Config.suite_files`)."""
    from seatrial.config import CONFIG_FILE

    if not config.suites:
        raise ConfigError(
            _(
                "{file} lists no suites: add e.g. `suites: [suites/]` for `seatrial nightly` to run"
            ).format(file=config.file or CONFIG_FILE)
        )
    return config.suite_files()


def _probe_alarm(store: Store, suite: Suite, run_id: str, config: Config) -> bool:
    """Print the probe's drift against its baseline, and send its alarm to `alerts:`; True
    when it raised an alarm."""
    from seatrial.compare import probe_drift

    try:
        report = probe_drift(store, run_id)
    except RunNotFound:
        console.print(
            _(
                "probe {suite}: no earlier run to compare with; this run is the baseline for "
                "the next one"
            ).format(suite=escape(suite.name)),
            highlight=False,
        )
        return False
    print_drift(report)
    send_drift_alert(report, config)
    return report.alarmed


@app.command()
@guarded
def nightly(
    agent: Agent = None,
    db: Db = None,
    baseline: Baseline = None,
    lang: Lang = None,
) -> None:
    """Run the suites of seatrial.yaml `suites:`, probes first, comparing each probe with its
    baseline; each run stores and checks its gates as `seatrial run` does. Exit 1 on a drift
    alarm or an unmet gate, 0 otherwise, 2 on bad input."""
    import asyncio

    from seatrial._execute import agent_for, check_agent, default_options, execute_suite_async
    from seatrial.case import load_suite
    from seatrial.report import print_summary
    from seatrial.run import progress_for

    config = project()
    speak_reader_language(lang, config)
    options = default_options(config, tags=[NIGHTLY_TAG])
    # Probes first: a model that changed under us explains what the other suites show.
    suites = sorted((load_suite(path) for path in suite_files(config)), key=lambda s: not s.probe)
    adapters = [agent_for(agent, suite, config, options) for suite in suites]
    for adapter in adapters:  # bad input stops here, before the store is touched
        asyncio.run(check_agent(adapter))
    problems: list[str] = []
    with open_store(db, config) as store:
        for suite, adapter in zip(suites, adapters, strict=True):
            console.rule(
                (_("probe {name}") if suite.probe else _("suite {name}")).format(name=suite.name)
            )
            # The same call as `seatrial run`: the suite's gates (else seatrial.yaml's) are
            # stored when the run starts and checked, with P0 and min_pass_rate, at its end.
            result = asyncio.run(
                execute_suite_async(
                    suite,
                    adapter,
                    config=config,
                    options=options,
                    baseline=baseline,
                    store=store,
                    progress=progress_for(console),
                    on_notice=print_notice,
                    with_attempts=False,
                )
            )
            print_summary(result.report, console)
            if result.interrupted:
                raise typer.Exit(130)
            if suite.probe and _probe_alarm(store, suite, result.run_id, config):
                problems.append(
                    _("probe {name}: drift alarm (run {run_id})").format(
                        name=suite.name, run_id=result.run_id
                    )
                )
            if not result.report.gate.passed:
                problems.append(
                    _("suite {name}: gate not met (run {run_id})").format(
                        name=suite.name, run_id=result.run_id
                    )
                )
    console.rule(_("nightly"))
    for problem in problems:
        err_console.print(f"[bold red]{escape(problem)}[/]", highlight=False)
    if not problems:
        said = ngettext(
            "[green]{count} suite run: no drift alarm, every gate met[/]",
            "[green]{count} suites run: no drift alarm, every gate met[/]",
            len(suites),
        )
        console.print(said.format(count=len(suites)))
    raise typer.Exit(1 if problems else 0)
