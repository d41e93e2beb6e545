"""``seatrial alerts test``: send a test message to the chat channels of ``alerts:``; and the
drift alert ``seatrial nightly`` sends."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.errors import ConfigError

if TYPE_CHECKING:
    from seatrial.compare import DriftReport
    from seatrial.config import Config
    from seatrial.notify import Delivery

alerts_app = typer.Typer(
    help="Alerts to Feishu, DingTalk, WeCom, Slack or a webhook (seatrial.yaml `alerts:`).",
    no_args_is_help=True,
)
app.add_typer(alerts_app, name="alerts")


def print_delivery(event: str, delivery: Delivery) -> None:
    """One channel's outcome: sent on stdout, not sent (with why) on stderr."""
    if delivery.sent:
        console.print(f"alert {event}: {escape(delivery.line())}", highlight=False)
    else:
        err_console.print(f"[yellow]alert {event}: {escape(delivery.line())}[/]", highlight=False)


def send_drift_alert(report: DriftReport, config: Config) -> None:
    """Send a probe's drift alarm to the channels that receive ``drift``; a failed delivery
    is printed, never raised."""
    import asyncio

    from seatrial.notify import notify
    from seatrial.report import drift_notification

    if not (report.alarmed and config.alerts.channels):
        return
    notification = drift_notification(report, config.dashboard_address())
    for delivery in asyncio.run(notify(config.alerts, notification)):
        print_delivery(notification.event, delivery)


@alerts_app.command("test")
@guarded
def test(
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel", "-c", metavar="NAME", help="Only this channel (repeatable; default: all)."
        ),
    ] = None,
) -> None:
    """Send a test message to every channel of seatrial.yaml `alerts:` (or the ones named),
    whatever events they receive. Exit 0 when every channel accepted it, 1 when one did not
    (quiet hours included), 2 when `alerts:` has no such channel or a ${NAME} is not set."""
    import asyncio

    from seatrial.config import CONFIG_FILE, load_config
    from seatrial.notify import Notification, notify

    config = load_config(Path.cwd())
    if not config.alerts.channels:
        raise ConfigError(
            f"{config.file or CONFIG_FILE} has no `alerts: channels:`; add one, e.g. "
            "`alerts: {channels: {team: {kind: slack, url: '${SLACK_WEBHOOK_URL}'}}}`"
        )
    notification = Notification(
        event="test",
        title=f"Seatrial test message ({config.project})",
        text=(
            f"Alerts of project **{config.project}** reach this chat. Seatrial sends here "
            "when a run fails its gates, a pass rate drops against its baseline, a probe "
            "drifts, and the daily report."
        ),
        link=config.dashboard_address(),
        facts=(("project", config.project),),
    )
    chosen = channel or list(config.alerts.channels)  # named: sent whatever their events
    deliveries = asyncio.run(notify(config.alerts, notification, channels=chosen))
    for delivery in deliveries:
        print_delivery("test", delivery)
    raise typer.Exit(0 if all(d.sent for d in deliveries) else 1)
