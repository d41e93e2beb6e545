"""Notifications to chat: Feishu, DingTalk, WeCom and Slack bots in their own formats, and a
generic JSON webhook; quiet hours, retries with backoff, secrets from the environment.

This package formats and sends; it does not know runs. What a run, a drift report or a daily
report says in a notification is built by :mod:`seatrial.report` (``run_notifications`` ...).
"""

from seatrial.notify._formats import SIGNATURE_HEADER, TIMESTAMP_HEADER, WEBHOOK_SCHEMA
from seatrial.notify._github import (
    GITHUB_COMMENT_LIMIT,
    CommentOutcome,
    marker_line,
    post_sticky_comment,
)
from seatrial.notify._message import Delivery, MessageKind, Notification
from seatrial.notify._secrets import check_channels
from seatrial.notify._send import RETRY_AFTER_CAP_S, notify
from seatrial.notify._settings import (
    EVENT_KINDS,
    AlertSettings,
    ChannelConfig,
    ChannelKind,
    EventKind,
)

__all__ = [
    "EVENT_KINDS",
    "GITHUB_COMMENT_LIMIT",
    "RETRY_AFTER_CAP_S",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "WEBHOOK_SCHEMA",
    "AlertSettings",
    "ChannelConfig",
    "ChannelKind",
    "CommentOutcome",
    "Delivery",
    "EventKind",
    "MessageKind",
    "Notification",
    "check_channels",
    "marker_line",
    "notify",
    "post_sticky_comment",
]
