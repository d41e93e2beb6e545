"""``alerts:`` of seatrial.yaml: where notifications go, and when they stay quiet."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seatrial.i18n import gettext as _

ChannelKind = Literal["feishu", "dingtalk", "wecom", "slack", "webhook"]
"""The chat bots Seatrial writes to in their documented formats, and a generic JSON webhook."""

EventKind = Literal["gate_failed", "metric_drop", "drift", "daily_report"]
"""What a notification is about."""

EVENT_KINDS: tuple[EventKind, ...] = ("gate_failed", "metric_drop", "drift", "daily_report")

_QUIET = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")
_SIGNED: frozenset[ChannelKind] = frozenset({"feishu", "dingtalk", "webhook"})


class ChannelConfig(BaseModel):
    """One destination: a bot's webhook URL, its signing secret, the events it receives."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ChannelKind
    """The message format: ``feishu``, ``dingtalk``, ``wecom``, ``slack`` or ``webhook``."""
    url: str = Field(min_length=1, repr=False)
    """The webhook URL. Write it as ``${NAME}`` to read it from the environment: a bot's URL
    carries its key, so it is a secret."""
    secret: str | None = Field(default=None, repr=False)
    """The signing secret (Feishu, DingTalk, generic webhook), as ``${NAME}``."""
    events: list[EventKind] = Field(default_factory=lambda: list(EVENT_KINDS), min_length=1)
    """Which events this channel receives; all by default."""

    @model_validator(mode="after")
    def _secret_is_used(self) -> ChannelConfig:
        if self.secret is not None and self.kind not in _SIGNED:
            raise ValueError(
                _("a {kind} bot is not signed: remove `secret:` (its key is in the URL)").format(
                    kind=self.kind
                )
            )
        return self


class AlertSettings(BaseModel):
    """The ``alerts:`` section."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    channels: dict[str, ChannelConfig] = Field(default_factory=dict)
    """Named destinations."""
    quiet_hours: str | None = None
    """``HH:MM-HH:MM`` in ``timezone`` (may wrap midnight, ``22:00-08:00``): no message is
    sent then; the run still stores its verdict, and the daily report covers it."""
    timezone: str = "UTC"
    """The IANA time zone of ``quiet_hours``."""
    retries: int = Field(default=3, ge=0, le=10)
    """Sends tried again after a failed one (a refused connection, a timeout, 429, 5xx, a bot's
    "sending too fast" answer)."""
    backoff_s: float = Field(default=1.0, ge=0, le=60)
    """Seconds before the first retry, doubled for each next one; a ``Retry-After`` answer
    wins (up to 60 seconds)."""
    timeout_s: float = Field(default=10.0, gt=0, le=120)
    """Seconds one send may take before it counts as timed out."""
    drop_confidence: float = Field(default=0.95, gt=0.5, lt=1)
    """How sure a ``metric_drop`` must be: the confidence of the Newcombe interval of the
    pass-rate change, which must lie wholly below zero."""

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours_format(cls, value: str | None) -> str | None:
        if value is None:
            return None
        match = _QUIET.match(value.strip())
        if match is None:
            raise ValueError(
                _("{value} is not HH:MM-HH:MM; write e.g. `22:00-08:00`").format(value=repr(value))
            )
        start, end = value.strip().split("-")
        if start == end:
            raise ValueError(
                _("{value} starts and ends at the same minute; give a span").format(
                    value=repr(value)
                )
            )
        return value.strip()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                _("{value} is not an IANA time zone; write e.g. `Asia/Shanghai` or `UTC`").format(
                    value=repr(value)
                )
            ) from None
        return value

    def quiet_at(self, moment: dt.datetime) -> bool:
        """Whether ``moment`` (aware) falls in the quiet hours, read in ``timezone``.

        The start minute is quiet, the end minute is not: ``22:00-08:00`` is quiet from
        22:00 to 07:59.
        """
        if self.quiet_hours is None:
            return False
        local = moment.astimezone(ZoneInfo(self.timezone)).time().replace(second=0, microsecond=0)
        start, end = (dt.time.fromisoformat(part) for part in self.quiet_hours.split("-"))
        if start < end:
            return start <= local < end
        return local >= start or local < end
