"""``seatrial COMMAND`` builds only that command (``app_for``), and it reads and runs the same
as it does within the whole application."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.cli._app import app_for


def command_names() -> list[str]:
    """The names of the application's own commands (not its groups), as typed."""
    return [
        command.name or typer.main.get_command_name(command.callback.__name__)  # type: ignore[union-attr]
        for command in app.registered_commands
    ]


def invoke(application: typer.Typer, args: list[str]) -> tuple[int, str]:
    done = CliRunner(env={"COLUMNS": "120"}).invoke(application, args)
    return done.exit_code, done.output


def test_every_command_alone_prints_the_help_it_prints_in_the_whole_application():
    names = command_names()
    assert {"validate", "runs", "run", "report"} <= set(names)
    for name in names:
        alone = app_for([name, "--help"])
        assert len(alone.registered_commands) == 1 and not alone.registered_groups, name
        assert invoke(alone, [name, "--help"]) == invoke(app, [name, "--help"]), name


def test_a_command_alone_reports_a_bad_option_as_the_whole_application_does():
    for args in (["runs", "--limit", "many"], ["validate"], ["report", "--no-such-option"]):
        alone = invoke(app_for(args), args)
        assert alone == invoke(app, args), args
        assert alone[0] == 2, args


def test_the_whole_application_lists_groups_options_and_near_misses():
    assert app_for([]) is app
    assert app_for(["--help"]) is app
    assert app_for(["--version"]) is app
    assert app_for(["cases", "expand", "--help"]) is app  # a group
    assert app_for(["validat", "x"]) is app  # its error suggests `validate`
    code, out = invoke(app_for(["validat", "x"]), ["validat", "x"])
    assert code == 2 and "Did you mean 'validate'?" in out
    alone = app_for(["validate", "x"])
    assert alone is not app and len(alone.registered_commands) == 1
    assert app.registered_groups and len(app.registered_commands) == len(command_names())
