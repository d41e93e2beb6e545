"""What is sent (a :class:`Notification`) and what became of it on one channel (a
:class:`Delivery`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext
from seatrial.notify._settings import EventKind

MessageKind = EventKind | Literal["test"]
"""An event a channel may subscribe to, or ``test`` (``seatrial alerts test``)."""


@dataclass(frozen=True)
class Notification:
    """One message, written once and rendered in each channel's own format."""

    event: MessageKind
    """What it is about; a channel receives it when its ``events`` include this."""
    title: str
    """One line: what happened (``workspace-agent failed its gates``)."""
    text: str
    """The body, in Markdown: bold, links, bullet lists (each platform's subset is kept)."""
    link: str | None = None
    """Where to read more (the run on the dashboard); None without a dashboard."""
    facts: tuple[tuple[str, str], ...] = ()
    """Short name-value pairs shown as fields: suite, agent, run, pass rate."""
    also: tuple[EventKind, ...] = ()
    """Further events this one message carries: a run that failed its gates and whose pass
    rate dropped sends one ``gate_failed`` message with ``also=("metric_drop",)``, not two."""

    @property
    def events(self) -> tuple[MessageKind, ...]:
        """``event`` then ``also``: a channel receives the message when its ``events``
        include any of them."""
        return (self.event, *self.also)


@dataclass(frozen=True)
class Delivery:
    """What became of a notification on one channel; never holds its URL or secret."""

    channel: str
    """The channel's name under ``alerts.channels``."""
    sent: bool
    """True when the platform accepted the message."""
    status: int | None = None
    """The last HTTP status answered; None when nothing answered (or nothing was tried)."""
    tries: int = 0
    """Requests made: 1, or more after retries; 0 when nothing was tried."""
    reason: str = ""
    """Why it was not sent (``quiet hours``, ``HTTP 500``, ``errcode 310000: sign not
    match``); empty when sent."""

    def line(self) -> str:
        """``feishu: sent (2 tries)`` or ``slack: not sent after 4 tries: HTTP 500``."""
        if self.sent:
            return ngettext(
                "{channel}: sent ({n} try)", "{channel}: sent ({n} tries)", self.tries
            ).format(channel=self.channel, n=self.tries)
        if self.tries:
            return ngettext(
                "{channel}: not sent after {n} try: {reason}",
                "{channel}: not sent after {n} tries: {reason}",
                self.tries,
            ).format(channel=self.channel, n=self.tries, reason=self.reason)
        return _("{channel}: not sent: {reason}").format(channel=self.channel, reason=self.reason)
