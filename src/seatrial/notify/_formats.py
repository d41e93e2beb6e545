"""Each platform's request for one notification: body, headers, signing, size limits.

Formats as the platforms document their incoming webhooks:

- Feishu / Lark custom bot: an ``interactive`` card; signed with ``timestamp`` and ``sign`` in
  the body, ``sign`` being base64(HMAC-SHA256 keyed with ``timestamp + "\\n" + secret`` over an
  empty message). The request body may not exceed 20 KB.
- DingTalk custom robot: ``msgtype: markdown``; signed with ``&timestamp=&sign=`` query
  parameters, ``sign`` being base64(HMAC-SHA256 of ``timestamp_ms + "\\n" + secret`` keyed
  with the secret), URL-encoded.
- WeCom group robot: ``msgtype: markdown``, content at most 4096 bytes; unsigned (the key is in
  the URL).
- Slack incoming webhook: ``text`` (the notification fallback) and ``blocks`` (header,
  mrkdwn section of at most 3000 characters, fields, a button).
- Generic webhook: Seatrial's own JSON (docs/monitoring.md), signed when a secret is set.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from seatrial.i18n import N_
from seatrial.i18n import gettext as _
from seatrial.notify._message import Notification
from seatrial.notify._secrets import Endpoint
from seatrial.notify._text import Measure, cut, hard_breaks, size, slack_mrkdwn

FEISHU_TEXT_BYTES = 18_000
"""The card's text budget: Feishu refuses bodies over 20 KB; the rest is the card's frame."""
DINGTALK_TEXT_CHARS = 5_000
"""DingTalk documents no exact limit and refuses long messages; kept well under."""
WECOM_CONTENT_BYTES = 4_096
"""WeCom's documented limit on markdown ``content``."""
SLACK_SECTION_CHARS = 3_000
"""Slack's limit on a section block's text."""
SLACK_HEADER_CHARS = 150
"""Slack's limit on a header block's text."""
SLACK_FIELDS = 10
"""Slack's limit on a section's fields."""
OPEN_IN_SEATRIAL = N_("Open in Seatrial")
"""The link's button (or link text), in the reader's language."""
WEBHOOK_SCHEMA = "seatrial.notification/1"
"""The generic webhook's body format, carried in its ``schema`` field."""
SIGNATURE_HEADER = "X-Seatrial-Signature"
TIMESTAMP_HEADER = "X-Seatrial-Timestamp"

_JSON = {"Content-Type": "application/json; charset=utf-8"}
_ALARM_EVENTS = frozenset({"gate_failed", "metric_drop", "drift"})


@dataclass(frozen=True)
class Request:
    """One POST to a channel."""

    url: str = field(repr=False)
    body: bytes
    headers: dict[str, str]


def request_for(endpoint: Endpoint, notification: Notification, delivery_id: str) -> Request:
    """The request that sends ``notification`` to ``endpoint``, signed now."""
    builders = {
        "feishu": _feishu,
        "dingtalk": _dingtalk,
        "wecom": _wecom,
        "slack": _slack,
        "webhook": _webhook,
    }
    return builders[endpoint.channel.kind](endpoint, notification, delivery_id)


def _dumps(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def _fit(
    head: list[str], text: str, tail: list[str], limit: int, measure: Measure, link: str | None
) -> str:
    """``head``, ``text`` and ``tail`` as paragraphs within ``limit``: only ``text`` is cut, so
    the title, the facts and the link always arrive."""
    frame = size("\n\n".join([*head, "", *tail]), measure)
    return "\n\n".join([*head, cut(text, max(limit - frame, 0), measure, link), *tail])


def _facts_md(notification: Notification) -> str:
    return "\n".join(f"- **{name}**: {value}" for name, value in notification.facts)


def _feishu(endpoint: Endpoint, notification: Notification, delivery_id: str) -> Request:
    text = cut(notification.text, FEISHU_TEXT_BYTES, "bytes", notification.link)
    elements: list[dict[str, Any]] = [{"tag": "div", "text": {"tag": "lark_md", "content": text}}]
    if notification.facts:
        elements.append(
            {
                "tag": "div",
                "fields": [
                    {"is_short": True, "text": {"tag": "lark_md", "content": f"**{k}**\n{v}"}}
                    for k, v in notification.facts
                ],
            }
        )
    if notification.link:
        button = {"tag": "plain_text", "content": _(OPEN_IN_SEATRIAL)}
        elements.append(
            {
                "tag": "action",
                "actions": [
                    {"tag": "button", "text": button, "type": "primary", "url": notification.link}
                ],
            }
        )
    alarm = notification.event in _ALARM_EVENTS
    payload: dict[str, Any] = {
        "msg_type": "interactive",
        "card": {
            "config": {"wide_screen_mode": True},
            "header": {
                "title": {"tag": "plain_text", "content": notification.title},
                "template": "red" if alarm else "blue",
            },
            "elements": elements,
        },
    }
    if endpoint.secret:
        timestamp = str(int(time.time()))
        key = f"{timestamp}\n{endpoint.secret}".encode()
        digest = hmac.new(key, b"", hashlib.sha256).digest()
        payload = {"timestamp": timestamp, "sign": base64.b64encode(digest).decode(), **payload}
    return Request(endpoint.url, _dumps(payload), dict(_JSON))


def _dingtalk(endpoint: Endpoint, notification: Notification, delivery_id: str) -> Request:
    tail = [hard_breaks(_facts_md(notification))] if notification.facts else []
    if notification.link:
        tail.append(f"[{_(OPEN_IN_SEATRIAL)}]({notification.link})")
    text = _fit(
        [f"### {notification.title}"],
        hard_breaks(notification.text),
        tail,
        DINGTALK_TEXT_CHARS,
        "chars",
        notification.link,
    )
    payload = {"msgtype": "markdown", "markdown": {"title": notification.title, "text": text}}
    url = endpoint.url
    if endpoint.secret:
        timestamp = str(int(time.time() * 1000))
        to_sign = f"{timestamp}\n{endpoint.secret}".encode()
        digest = hmac.new(endpoint.secret.encode(), to_sign, hashlib.sha256).digest()
        query = urlencode({"timestamp": timestamp, "sign": base64.b64encode(digest).decode()})
        url = f"{url}{'&' if '?' in url else '?'}{query}"
    return Request(url, _dumps(payload), dict(_JSON))


def _wecom(endpoint: Endpoint, notification: Notification, delivery_id: str) -> Request:
    colour = "warning" if notification.event in _ALARM_EVENTS else "info"
    tail = []
    if notification.facts:
        tail.append("\n".join(f"> **{name}**: {value}" for name, value in notification.facts))
    if notification.link:
        tail.append(f"[{_(OPEN_IN_SEATRIAL)}]({notification.link})")
    head = [f'## <font color="{colour}">{notification.title}</font>']
    content = _fit(head, notification.text, tail, WECOM_CONTENT_BYTES, "bytes", notification.link)
    payload = {"msgtype": "markdown", "markdown": {"content": content}}
    return Request(endpoint.url, _dumps(payload), dict(_JSON))


def _slack(endpoint: Endpoint, notification: Notification, delivery_id: str) -> Request:
    header = cut(notification.title, SLACK_HEADER_CHARS)
    body = cut(slack_mrkdwn(notification.text), SLACK_SECTION_CHARS, "chars", notification.link)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": header}},
        {"type": "section", "text": {"type": "mrkdwn", "text": body}},
    ]
    if notification.facts:
        fields = [
            {"type": "mrkdwn", "text": cut(slack_mrkdwn(f"**{k}**\n{v}"), 2_000)}
            for k, v in notification.facts[:SLACK_FIELDS]
        ]
        blocks.append({"type": "section", "fields": fields})
    if notification.link:
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": _(OPEN_IN_SEATRIAL)},
            "url": notification.link,
        }
        blocks.append({"type": "actions", "elements": [button]})
    payload = {"text": f"{notification.title}\n{body}", "blocks": blocks}
    return Request(endpoint.url, _dumps(payload), dict(_JSON))


def _webhook(endpoint: Endpoint, notification: Notification, delivery_id: str) -> Request:
    moment = dt.datetime.now(dt.UTC)
    payload = {
        "schema": WEBHOOK_SCHEMA,
        "id": delivery_id,
        "event": notification.event,
        "events": list(notification.events),
        "title": notification.title,
        "text": notification.text,
        "link": notification.link,
        "facts": [{"name": name, "value": value} for name, value in notification.facts],
        "sent_at": moment.isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    body = _dumps(payload)
    headers = {
        **_JSON,
        "X-Seatrial-Event": notification.event,
        "X-Seatrial-Delivery": delivery_id,
        TIMESTAMP_HEADER: str(int(moment.timestamp())),
    }
    if endpoint.secret:
        digest = hmac.new(endpoint.secret.encode(), body, hashlib.sha256).hexdigest()
        headers[SIGNATURE_HEADER] = f"sha256={digest}"
    return Request(endpoint.url, body, headers)
