"""``seatrial github comment``: post or update the one Seatrial comment on a pull request."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.errors import InputError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

github_app = typer.Typer(
    help=N_("GitHub: the pull-request comment (one per pull request, updated on every run)."),
    no_args_is_help=True,
)
app.add_typer(github_app, name="github")


@github_app.command("comment")
@guarded
def comment(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE", help=N_("The Markdown (`seatrial ci --comment` or `report -f github`).")
        ),
    ],
    marker: Annotated[
        str | None,
        typer.Option(
            help=N_(
                "The comment's identity (its hidden first line); default: the file's own "
                "first-line marker, else `seatrial`."
            )
        ),
    ] = None,
) -> None:
    """Create or update the pull request's Seatrial comment (GITHUB_TOKEN, GITHUB_REPOSITORY,
    GITHUB_EVENT_PATH, GITHUB_API_URL as GitHub Actions sets them).

    Where it cannot comment (not a pull request, no token, a fork's read-only token) the
    Markdown goes to the job summary (GITHUB_STEP_SUMMARY) instead, and it exits 0.
    """
    from seatrial.notify import post_sticky_comment

    try:
        body = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            _(
                "cannot read the comment file {file}: {error}; write it with "
                "`seatrial ci --comment FILE` or `seatrial report RUN --format github -o FILE`"
            ).format(file=file, error=exc.strerror or exc)
        ) from None
    outcome = post_sticky_comment(body, marker=marker)
    # GitHub's words may hold brackets: printed as they are, not as Rich markup.
    if outcome.action == "created":
        console.print(
            _("created the Seatrial comment: {url}").format(url=outcome.url), markup=False
        )
    elif outcome.action == "updated":
        console.print(
            _("updated the Seatrial comment: {url}").format(url=outcome.url), markup=False
        )
    elif outcome.summary_file:
        console.print(
            _("no pull-request comment ({reason}); wrote it to the job summary").format(
                reason=outcome.reason
            ),
            markup=False,
        )
    else:
        err_console.print(
            _(
                "no pull-request comment ({reason}) and no job summary "
                "(GITHUB_STEP_SUMMARY is not set); the comment follows"
            ).format(reason=outcome.reason),
            markup=False,
        )
        sys.stdout.write(body)
