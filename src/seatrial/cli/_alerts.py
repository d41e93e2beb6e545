"""``seatrial alerts test``: send a test message to the chat channels of ``alerts:``."""

from __future__ import annotations

from typing import Annotated

import typer

from seatrial.cli._app import app, guarded
from seatrial.cli._context import project, speak_reader_language
from seatrial.cli._options import Lang
from seatrial.cli._output import print_delivery
from seatrial.errors import ConfigError
from seatrial.i18n import N_

alerts_app = typer.Typer(
    help=N_("Alerts to Feishu, DingTalk, WeCom, Slack or a webhook (seatrial.yaml `alerts:`)."),
    no_args_is_help=True,
)
app.add_typer(alerts_app, name="alerts")


@alerts_app.command("test")
@guarded
def test(
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel",
            "-c",
            metavar="NAME",
            help=N_("Only this channel (repeatable; default: all)."),
        ),
    ] = None,
    lang: Lang = None,
) -> None:
    """Send a test message to every channel of seatrial.yaml `alerts:` (or the ones named),
    whatever events they receive. Exit 0 when every channel accepted it, 1 when one did not
    (quiet hours included), 2 when `alerts:` has no such channel or a ${NAME} is not set."""
    import asyncio

    from seatrial.config import CONFIG_FILE
    from seatrial.i18n import gettext as _
    from seatrial.notify import Notification, notify

    config = project()
    speak_reader_language(lang, config)
    if not config.alerts.channels:
        raise ConfigError(
            _("{file} has no `alerts: channels:`; add one, e.g. {example}").format(
                file=config.file or CONFIG_FILE,
                example="`alerts: {channels: {team: {kind: slack, url: '${SLACK_WEBHOOK_URL}'}}}`",
            )
        )
    notification = Notification(
        event="test",
        title=_("Seatrial test message ({project})").format(project=config.project),
        text=_(
            "Alerts of project **{project}** reach this chat. Seatrial sends here when a run "
            "fails its gates, a pass rate drops against its baseline, a probe drifts, and the "
            "daily report."
        ).format(project=config.project),
        link=config.dashboard_address(),
        facts=((_("project"), config.project),),
    )
    chosen = channel or list(config.alerts.channels)  # named: sent whatever their events
    deliveries = asyncio.run(notify(config.alerts, notification, channels=chosen))
    for delivery in deliveries:
        print_delivery("test", delivery)
    raise typer.Exit(0 if all(d.sent for d in deliveries) else 1)
