"""Every option more than one command takes, declared here once with one help text.

A command names its options through these aliases (``db: Db = None``), so ``--db`` means the
same thing and says the same thing in every command. Where two commands give one option name
different meanings (``--limit`` counts runs in one and traces in another), each meaning is an
alias here, side by side, so a new command picks one instead of writing a fourth.
``tests/test_architecture.py`` fails when a command declares an option that another declares too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from seatrial.cli._help import filled
from seatrial.errors import InputError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _
from seatrial.trace import TRACE_FORMATS

# -- where and what: the store, the agent, the output ----------------------------------------

Db = Annotated[
    str | None,
    typer.Option(
        "--db",
        help=N_(
            "Store URL, or a SQLite file's path (default: SEATRIAL_DB_URL, seatrial.yaml, "
            ".seatrial/seatrial.db)."
        ),
    ),
]
Agent = Annotated[
    str | None,
    typer.Option(
        "--agent",
        "-a",
        metavar="SPEC",
        help=N_(
            "Agent spec or a named agent of seatrial.yaml (default: the suite's own; `ci`: "
            "the tier's)."
        ),
    ),
]
ContractAgent = Annotated[
    str,
    typer.Option(
        "--agent",
        metavar="SPEC",
        help=N_("model:NAME (a model under `models:`), or a named agent of seatrial.yaml."),
    ),
]
AgentFilter = Annotated[
    str | None, typer.Option("--agent", metavar="SPEC", help=N_("Only runs of this agent spec."))
]
SuiteFilter = Annotated[str | None, typer.Option("--suite", help=N_("Only runs of this suite."))]
TagFilter = Annotated[str | None, typer.Option("--tag", help=N_("Only runs with this tag."))]
Tags = Annotated[list[str] | None, typer.Option("--tag", help=N_("Label the run (repeatable)."))]
ImportTags = Annotated[
    list[str] | None,
    typer.Option("--tag", help=N_("Tag the run (repeatable); `imported` is added.")),
]
StaleSuite = Annotated[
    str | None, typer.Option("--suite", help=N_("Suite name (default: the newest run's suite)."))
]
SuiteFile = Annotated[
    Path | None,
    typer.Option("--suite", help=N_("The suite file holding the case."), show_default=False),
]
RunsLimit = Annotated[int, typer.Option("--limit", min=1, help=N_("How many runs, newest first."))]
TracesLimit = Annotated[
    int, typer.Option("--limit", min=1, help=N_("How many traces, newest first."))
]
CheckLimit = Annotated[
    int, typer.Option("--limit", min=1, help=N_("Check at most this many traces, newest first."))
]
HistoryLimit = Annotated[int, typer.Option("--limit", min=1, help=N_("Due times --history shows."))]

TextOrJson = Annotated[str, typer.Option("--format", "-f", help=N_("text or json."))]
TEXT_OR_JSON = ("text", "json")
"""What :data:`TextOrJson` takes."""
TextJsonOrMd = Annotated[
    str, typer.Option("--format", "-f", help=N_("text, json or md (Markdown, e.g. a PR comment)."))
]
TEXT_JSON_OR_MD = ("text", "json", "md")
"""What :data:`TextJsonOrMd` takes."""


def chosen_format(value: str, formats: Sequence[str] = TEXT_OR_JSON) -> str:
    """``value`` when it is one of ``formats``; else the error every command gives for a
    ``--format`` it does not write (exit 2)."""
    if value not in formats:
        raise InputError(
            _("unknown format {value}: use one of {formats}").format(
                value=repr(value), formats=", ".join(formats)
            )
        )
    return value


ReportFormat = Annotated[
    str, typer.Option("--format", "-f", help=N_("json, junit, md, or github (a PR comment)."))
]
TraceFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        help=filled(
            N_(
                "Refuse a file that is not this format ({formats}); without it each file's "
                "format is recognised."
            ),
            formats=", ".join(TRACE_FORMATS),
        ),
    ),
]
ReportOutput = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help=N_("Write here instead of stdout (`daily`: the folder, default seatrial-report)."),
    ),
]
LeaderboardOutput = Annotated[
    Path | None, typer.Option("--output", "-o", help=N_("Write the leaderboard here."))
]
TableOutput = Annotated[
    Path | None, typer.Option("--output", "-o", help=N_("Write the table here."))
]
Output = Annotated[
    Path | None, typer.Option("--output", "-o", help=N_("Write here instead of stdout."))
]
ReportDir = Annotated[
    Path | None,
    typer.Option(
        "--report-dir", help=N_("Where each run's report.json, junit.xml and summary.md go.")
    ),
]

Lang = Annotated[
    str | None,
    typer.Option(
        "--lang",
        metavar="LANG",
        help=N_(
            "Language of what is printed and written: en or zh (default: SEATRIAL_LANG, "
            "seatrial.yaml `language:`, the locale, English)."
        ),
        show_default=False,
    ),
]

DemoReportDir = Annotated[
    Path, typer.Option("--report-dir", help=N_("Where the two runs' reports go."))
]

# -- how a run runs ---------------------------------------------------------------------------

Repeats = Annotated[
    int | None,
    typer.Option("--repeats", min=1, help=N_("Run every case N times (pass^k and rates use N).")),
]
Concurrency = Annotated[
    int | None, typer.Option("--concurrency", min=1, help=N_("Attempts in flight (default 8)."))
]
WorkerConcurrency = Annotated[
    int,
    typer.Option(
        "--concurrency", min=1, help=N_("Attempts in flight in this worker (Celery threads).")
    ),
]
JudgeConcurrency = Annotated[
    int, typer.Option("--concurrency", min=1, help=N_("Judge calls at once."))
]
Timeout = Annotated[
    float | None, typer.Option("--timeout", min=0.001, help=N_("Seconds per attempt (default 60)."))
]
Gateway = Annotated[
    bool,
    typer.Option(
        "--gateway",
        help=N_(
            "Start the model gateway for every run; each attempt gets its own base URL "
            "(model: agents always use it)."
        ),
    ),
]
Judge = Annotated[
    str | None,
    typer.Option(
        "--judge",
        metavar="MODEL",
        help=N_("The judge model, a name under seatrial.yaml `models:` (overrides judge.model)."),
    ),
]
Baseline = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="REF",
        help=N_(
            "Compare with this run for max_regression gates: latest-passing, latest, a run id "
            "or a tag."
        ),
    ),
]
DriftBaseline = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="REF",
        help=N_(
            "Compare with this run (default: the newest earlier finished run of the "
            "same suite and agent, replays skipped)."
        ),
    ),
]
ReportBaseline = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        help=N_(
            "`--format github` only: list regressions against this run (id, prefix, tag, "
            "`latest-passing`); default: the baseline the run stored."
        ),
    ),
]

# -- golden sets and people ---------------------------------------------------------------------

Who = Annotated[
    str | None,
    typer.Option(
        "--who", help=N_("Who does it (recorded with it); default $USER."), show_default=False
    ),
]
Note = Annotated[
    str, typer.Option("--note", help=N_("Why, kept with the label or the new version."))
]
Reason = Annotated[str, typer.Option("--reason", help=N_("Why (stored with the decision)."))]
Dataset = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        metavar="NAME[@V]",
        help=N_(
            "Also run this golden set's cases (its newest version unless @V); the run "
            "records the version. Replaces the suite's `dataset:`; SUITE may then be left out."
        ),
    ),
]
ExpandDataset = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        help=N_(
            "The golden set the variants are meant for (and where the case is read "
            "from when no --suite is given)."
        ),
        show_default=False,
    ),
]
JoinDataset = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        help=N_("The golden set they join (default: the one each names)."),
        show_default=False,
    ),
]
DatasetFilter = Annotated[
    str | None,
    typer.Option("--dataset", help=N_("Only cases meant for this golden set."), show_default=False),
]

# -- the judge's agreement with people ------------------------------------------------------------

LabelsFile = Annotated[
    Path,
    typer.Option(
        "--labels",
        help=N_(
            "Human labels: pointwise {input, output, label: pass|fail, category?} or "
            "pairwise {input, output_1, output_2, label: 1|2} (JSONL or a JSON list)."
        ),
    ),
]
Labels = Annotated[
    str,
    typer.Option(
        "--labels",
        help=N_(
            "Human labels: a JSONL/JSON file (pointwise {input, output, label: pass|fail} "
            "or pairwise {input, output_1, output_2, label: 1|2}), or `queue` for the labels "
            "given with `seatrial review`."
        ),
    ),
]
Resamples = Annotated[
    int, typer.Option("--resamples", min=1, help=N_("Bootstrap resamples for kappa's interval."))
]
Seed = Annotated[
    int, typer.Option("--seed", help=N_("Seed of the bootstrap, for a reproducible interval."))
]

# -- servers --------------------------------------------------------------------------------------

Host = Annotated[
    str, typer.Option("--host", help=N_("Address to bind; anything but loopback needs --token."))
]
GatewayHost = Annotated[str, typer.Option("--host", help=N_("Interface to listen on."))]
Port = Annotated[int, typer.Option("--port", min=0, max=65535, help=N_("Port (0: any free one)."))]
