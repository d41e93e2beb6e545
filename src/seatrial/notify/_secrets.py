"""A channel's URL and signing secret, read from the environment when they are sent.

``url`` and ``secret`` may hold ``${NAME}`` references (the whole value, or a part such as
``https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=${WECOM_KEY}``). A missing variable is
a :class:`~seatrial.errors.ConfigError` naming the key and the variable, never a value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _
from seatrial.notify._settings import AlertSettings, ChannelConfig

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYLIKE = 12
"""Path segments and query values this long are taken for keys and never shown."""


@dataclass(frozen=True)
class Endpoint:
    """A channel with its secrets read: what a send needs, kept out of every message."""

    name: str
    channel: ChannelConfig
    url: str = field(repr=False)
    secret: str | None = field(default=None, repr=False)

    def redact(self, text: str) -> str:
        """``text`` with the URL, the long parts of its path and query (where bots keep
        their keys) and the secret replaced by ``***``."""
        parts = urlsplit(self.url)
        pieces = [*parts.path.split("/"), *(v for _, v in parse_qsl(parts.query))]
        hidden = [self.url, parts.query, self.secret, *(p for p in pieces if len(p) >= _KEYLIKE)]
        for value in sorted((v for v in hidden if v), key=len, reverse=True):
            text = text.replace(value, "***")
        return text


def _resolve(value: str, key: str, environ: Mapping[str, str]) -> str:
    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        found = environ.get(name)
        if not found:
            raise ConfigError(
                _(
                    "seatrial.yaml {key} refers to {reference}, which is not set; export {name} "
                    "(the webhook URL or secret of that bot) before running"
                ).format(key=key, reference="${" + name + "}", name=name)
            )
        return found

    return _REFERENCE.sub(lookup, value)


def endpoint(
    name: str, channel: ChannelConfig, environ: Mapping[str, str] | None = None
) -> Endpoint:
    """The channel ``name`` with its ``${NAME}`` references read from ``environ`` (default:
    the process environment)."""
    env = os.environ if environ is None else environ
    where = f"alerts.channels.{name}"
    url = _resolve(channel.url, f"{where}.url", env)
    if not url.startswith(("https://", "http://")):
        raise ConfigError(
            _(
                "seatrial.yaml {key} is not an http(s) URL; give the bot's webhook URL "
                "(as {reference}, read from the environment)"
            ).format(key=f"{where}.url", reference="${NAME}")
        )
    secret = _resolve(channel.secret, f"{where}.secret", env) if channel.secret else None
    return Endpoint(name, channel, url, secret)


def check_channels(settings: AlertSettings, environ: Mapping[str, str] | None = None) -> None:
    """Read every channel's secrets now, so a missing variable stops a command before it runs.

    Raises:
        ConfigError: a ``${NAME}`` is not set, or a URL is not http(s); the message names
            the key and the variable, never a value.
    """
    for name, channel in settings.channels.items():
        endpoint(name, channel, environ)
