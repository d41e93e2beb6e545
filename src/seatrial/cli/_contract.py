"""``seatrial contract TOOLS.json --agent model:X``: the standard fault cases of every tool in
a schema, run as one stored run, and the recovery table per tool and fault.

The cases come from :func:`seatrial.dataset.contract_suite`; the run goes through the front
door (:func:`seatrial.execute_suite_async`); the table is read off the run's traces
(:func:`seatrial.dataset.recovery_table`). Exit 0 when the run meets its gates (by default:
at least 80% of the attempts pass), 1 when not, 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import project, speak_reader_language
from seatrial.cli._options import (
    TEXT_JSON_OR_MD,
    Concurrency,
    ContractAgent,
    Db,
    Lang,
    Repeats,
    TableOutput,
    TextJsonOrMd,
    Timeout,
    chosen_format,
)
from seatrial.errors import InputError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.agent import AgentAdapter
    from seatrial.config import Config

CONTRACT_RESULT = "python:seatrial.dataset:contract_result"
"""The implementation a bare ``model:NAME`` agent's tools get in a contract run."""
CONTRACT_PROMPT = "You are an assistant with tools. Use them to do what the user asks."
"""The system prompt of a bare ``model:NAME`` agent in a contract run."""


def parse_faults(value: str | None) -> list[str]:
    """The faults of ``--faults a,b``; every kind when unset."""
    from typing import get_args

    from seatrial.case import FaultKind

    known = get_args(FaultKind)
    if value is None:
        return list(known)
    faults = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [f for f in faults if f not in known]
    if unknown or not faults:
        raise InputError(
            _("--faults: unknown fault {unknown}; give a comma-separated list of: {known}").format(
                unknown=", ".join(unknown) or _("(none given)"), known=", ".join(known)
            )
        )
    return faults


def _contract_agent(
    adapter: AgentAdapter, tools: list[dict[str, Any]], tools_file: Path, config: Config
) -> AgentAdapter:
    """A bare ``model:NAME`` agent gets the schema's tools, each answering a plain success;
    an agent with tools of its own keeps them, and must have every tool of the schema."""
    from seatrial.agent import ModelAgent, ModelAgentSettings

    if not isinstance(adapter, ModelAgent):
        return adapter
    names = [tool["function"]["name"] for tool in tools]
    if adapter.settings.tools is None:
        settings = ModelAgentSettings(
            system_prompt=CONTRACT_PROMPT,
            tools=tools,
            implementations=dict.fromkeys(names, CONTRACT_RESULT),
        )
        return ModelAgent(
            adapter.spec,
            settings,
            name=adapter.name,
            base_dir=config.project_dir,
            model_id=adapter.model_id,
        )
    own = {tool["function"]["name"] for tool in adapter.tools}
    missing = [name for name in names if name not in own]
    if missing:
        raise InputError(
            _(
                "agent `{agent}` has no tool {missing} of {path}: give it these tools in "
                "seatrial.yaml, or pass --agent model:{model} (a bare model gets the schema's "
                "tools, each answering a plain success)"
            ).format(
                agent=adapter.name, missing=", ".join(missing), path=tools_file, model=adapter.model
            )
        )
    return adapter


@app.command(name="contract")
@guarded
def contract_command(
    tools_file: Annotated[
        Path,
        typer.Argument(
            metavar="TOOLS",
            help=N_("Tool schemas: OpenAI tools JSON/YAML, an MCP tools/list result, or OpenAPI."),
        ),
    ],
    agent: ContractAgent,
    faults: Annotated[
        str | None,
        typer.Option(
            "--faults",
            metavar="A,B",
            help=N_(
                "Faults to inject (default all): missing_param, bad_enum, http_500, timeout, "
                "malformed_json, empty."
            ),
        ),
    ] = None,
    repeats: Repeats = None,
    format: TextJsonOrMd = "text",
    output: TableOutput = None,
    min_pass_rate: Annotated[
        float,
        typer.Option(
            "--min-pass-rate", min=0, max=1, help=N_("The run's gate: share of attempts that pass.")
        ),
    ] = 0.8,
    concurrency: Concurrency = None,
    timeout: Timeout = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Inject each fault into each tool of TOOLS at its first call and check that the model
    repairs its call within two model turns: after missing_param or bad_enum by changing the
    call as the error says, after http_500, timeout, empty or malformed_json by calling again
    (the same call is fine); print the recovery table per tool and fault, headed by the pass
    rate the gate uses. Exit 0 when at least --min-pass-rate of the attempts pass, 1 when
    not, 2 on bad input."""
    import asyncio

    from seatrial._execute import agent_for, default_options, execute_suite_async
    from seatrial.agent import load_tools
    from seatrial.dataset import contract_suite, recovery_table, render_recovery_table
    from seatrial.errors import AgentSpecError
    from seatrial.run import progress_for

    chosen_format(format, TEXT_JSON_OR_MD)
    config = project()
    speak_reader_language(lang, config)
    kinds = parse_faults(faults)
    try:
        tools = load_tools(str(tools_file.resolve()), Path.cwd(), str(tools_file))
    except AgentSpecError as exc:
        raise InputError(str(exc)) from exc
    if not tools:
        raise InputError(
            _("{path} holds no tools; give a file of tool schemas").format(path=tools_file)
        )
    suite = contract_suite(
        tools, name=f"contract-{tools_file.stem}", faults=kinds, min_pass_rate=min_pass_rate
    )
    options = default_options(config, repeats=repeats)
    if concurrency is not None:
        options.concurrency = concurrency
    if timeout is not None:
        options.timeout_s = timeout
    adapter = _contract_agent(agent_for(agent, suite, config, options), tools, tools_file, config)
    # The table (or Markdown, JSON) owns stdout when it is not a file: the rest goes to stderr.
    chatter = console if format == "text" and output is None else err_console

    def notice(level: str, text: str) -> None:
        (chatter if level == "info" else err_console).print(escape(text), highlight=False)

    try:
        done = asyncio.run(
            execute_suite_async(
                suite,
                adapter,
                config=config,
                options=options,
                db=db,
                with_traces=True,
                write_report_files=False,
                progress=progress_for(chatter),
                on_notice=notice,
            )
        )
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise typer.Exit(130) from None
    table = recovery_table(done.run_id, done.report.cases, suite, done.report.gate)
    text = render_recovery_table(table, "md" if format == "md" else format)
    if output is not None:
        output.write_text(text + "\n", encoding="utf-8")
        chatter.print(
            _("recovery table written to {path}").format(path=output), highlight=False, markup=False
        )
    else:
        typer.echo(text)
    # The table ends with the gate's figure and verdict; the reasons say which gate held not.
    for reason in done.report.gate.reasons:
        chatter.print(_("gate: {reason}").format(reason=reason), highlight=False, markup=False)
    chatter.print(
        _("run {run_id} stored").format(run_id=done.run_id), highlight=False, markup=False
    )
    raise typer.Exit(done.exit_code)
