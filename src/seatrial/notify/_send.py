"""Sending one notification to every channel that receives it: in parallel, with retries.

A send is tried again, up to ``alerts.retries`` times with exponential backoff, when the
platform may accept it later: a refused connection, a timeout, HTTP 429 or 5xx (its
``Retry-After`` honoured), and a bot's own "sending too fast" answer inside an HTTP 200
(Feishu ``code`` 11232, DingTalk ``errcode`` 130101 and 410100, WeCom ``errcode`` 45009 and -1).
Anything else (a wrong signature, an unknown key) is reported at once. Nothing here raises
for a failed send: each channel's :class:`Delivery` says what happened.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from seatrial._http import retry_after_s
from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _
from seatrial.notify._formats import request_for
from seatrial.notify._message import Delivery, Notification
from seatrial.notify._secrets import Endpoint, endpoint
from seatrial.notify._settings import AlertSettings, ChannelKind

if TYPE_CHECKING:
    import httpx

RETRY_AFTER_CAP_S = 60.0
"""The longest ``Retry-After`` wait honoured; a longer one waits this long."""

_TRY_LATER: dict[ChannelKind, frozenset[int]] = {
    "feishu": frozenset({11232}),
    "dingtalk": frozenset({130101, 410100}),
    "wecom": frozenset({45009, -1}),
}
"""Body codes meaning "too many messages, try later" (each platform's documented codes)."""
_REASON_CHARS = 200

Verdict = Literal["sent", "retry", "failed"]


async def notify(
    settings: AlertSettings,
    notification: Notification,
    *,
    environ: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
    channels: Sequence[str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[Delivery]:
    """Send ``notification`` once to each channel whose ``events`` include one of its events.

    Args:
        settings: the ``alerts:`` section.
        notification: what to send.
        environ: where ``${NAME}`` references are read (default: the process environment).
        now: the moment checked against the quiet hours (default: now).
        channels: send to these channels only, whatever their ``events`` (``seatrial alerts
            test --channel``); None: every channel that receives the event.
        transport: an httpx transport to send through (tests); default: the network.

    Returns:
        One delivery per channel, in the order of ``alerts.channels``; empty when no channel
        receives the event.

    Raises:
        ConfigError: a channel named in ``channels`` does not exist, or a ``${NAME}`` is not
            set (named, never its value).
    """
    names = _chosen(settings, notification, channels)
    endpoints = [endpoint(name, settings.channels[name], environ) for name in names]
    if not endpoints:
        return []
    if settings.quiet_at(now or dt.datetime.now(dt.UTC)):
        reason = f"quiet hours ({settings.quiet_hours} {settings.timezone})"
        return [Delivery(name, False, reason=reason) for name in names]
    import httpx

    async with httpx.AsyncClient(
        timeout=settings.timeout_s, transport=transport, follow_redirects=False
    ) as client:
        sends = (_deliver(client, target, notification, settings) for target in endpoints)
        return list(await asyncio.gather(*sends))


def _chosen(
    settings: AlertSettings, notification: Notification, channels: Sequence[str] | None
) -> list[str]:
    if channels is None:
        return [
            name
            for name, channel in settings.channels.items()
            if any(event in channel.events for event in notification.events)
        ]
    unknown = [name for name in channels if name not in settings.channels]
    if unknown:
        known = ", ".join(settings.channels) or _("none")
        raise ConfigError(
            _(
                "no channel {channels} under alerts.channels in seatrial.yaml (known: {known})"
            ).format(channels=", ".join(unknown), known=known)
        )
    return [name for name in settings.channels if name in channels]


async def _deliver(
    client: httpx.AsyncClient,
    target: Endpoint,
    notification: Notification,
    settings: AlertSettings,
) -> Delivery:
    import httpx

    delivery_id = uuid.uuid4().hex  # the same across retries: receivers may drop repeats
    status: int | None = None
    reason = ""
    tries = 0
    for tries in range(1, settings.retries + 2):
        request = request_for(target, notification, delivery_id)
        wait: float | None = None
        try:
            response = await client.post(request.url, content=request.body, headers=request.headers)
        except httpx.TimeoutException:
            status, verdict, reason = None, "retry", "timed out"
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            status, verdict = None, "retry"
            reason = f"cannot connect ({target.redact(str(exc)) or type(exc).__name__})"
        except httpx.HTTPError as exc:
            status, verdict = None, "failed"
            reason = f"{type(exc).__name__}: {target.redact(str(exc))}"
        else:
            status = response.status_code
            verdict, reason = _judge(target.channel.kind, status, response.text)
            wait = _retry_after(response.headers.get("Retry-After"))
        if verdict == "sent":
            return Delivery(target.name, True, status, tries)
        if verdict == "failed" or tries > settings.retries:
            break
        await asyncio.sleep(wait if wait is not None else settings.backoff_s * 2 ** (tries - 1))
    shown = target.redact(reason)[:_REASON_CHARS]
    return Delivery(target.name, False, status, tries, shown)


def _judge(kind: ChannelKind, status: int, text: str) -> tuple[Verdict, str]:
    """What an answer means: sent, worth retrying, or refused; with the reason shown."""
    code, message = _body_code(text)
    said = f": {message}" if message else ""
    if status == 429 or status >= 500:
        return "retry", f"HTTP {status}{said}"
    if not 200 <= status < 300:
        return "failed", f"HTTP {status}{f' code {code}' if code else ''}{said}"
    if kind in ("slack", "webhook") or not code:
        return "sent", ""
    name = "code" if kind == "feishu" else "errcode"
    if code in _TRY_LATER.get(kind, frozenset()):
        return "retry", f"{name} {code}{said}"
    return "failed", f"{name} {code}{said}"


def _body_code(text: str) -> tuple[int, str]:
    """A bot's answer code and message (Feishu ``code``/``msg``, DingTalk and WeCom
    ``errcode``/``errmsg``); (0, "") when the body holds none."""
    try:
        body = json.loads(text)
    except ValueError:
        return 0, " ".join(text.split())[:_REASON_CHARS] if text.strip() != "ok" else ""
    if not isinstance(body, dict):
        return 0, ""
    code = body.get("code", body.get("errcode", body.get("StatusCode", 0)))
    message = body.get("msg", body.get("errmsg", body.get("StatusMessage")))
    if message is None:  # another service's answer: show it, cut (and redacted by the caller)
        message = json.dumps(body, ensure_ascii=False)[:_REASON_CHARS]
    try:
        return int(code or 0), str(message or "")
    except (TypeError, ValueError):
        return 0, str(message or "")


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header, at most :data:`RETRY_AFTER_CAP_S`."""
    asked = retry_after_s(value)
    return None if asked is None else min(asked, RETRY_AFTER_CAP_S)
