"""The language each dashboard request is answered in, and the switch between languages.

The first of these that names a language Seatrial speaks decides (docs/dashboard.md):

1. ``?lang=zh`` or ``?lang=en`` in the address; it is remembered in the ``seatrial_lang``
   cookie, so the pages a reader goes on to read keep it;
2. that cookie;
3. the browser's ``Accept-Language``, its tags in the order of their ``q`` weights;
4. the server's language (``seatrial serve --lang``, ``SEATRIAL_LANG``, ``seatrial.yaml``'s
   ``language:``, the locale);
5. English.

A value naming another language (``?lang=fr``, ``Accept-Language: fr``) is passed over, never
an error: a page is always answered. The language is set for the request's context
(:func:`seatrial.i18n.use_language`), so templates, views and JSON text read it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from seatrial.i18n import LANGUAGES, Language, current_language, language_of, use_language

LANGUAGE_COOKIE = "seatrial_lang"
"""The cookie remembering the language a reader chose with ``?lang=``."""

LANGUAGE_PARAMETER = "lang"
"""The query parameter choosing the page's language: ``?lang=zh`` or ``?lang=en``."""

COOKIE_MAX_AGE = 365 * 24 * 3600
"""How long the chosen language is remembered (seconds): a year."""

LANGUAGE_NAMES: dict[Language, str] = {"en": "English", "zh_CN": "中文"}
"""Each language named in itself, as the switch shows it (a reader finds their own)."""

_TAGS: dict[Language, str] = {"en": "en", "zh_CN": "zh"}
"""What ``?lang=`` and the cookie say for each language."""


def accepted_language(header: str) -> Language | None:
    """The language an ``Accept-Language`` header prefers among those Seatrial speaks.

    Its tags are read in the order of their ``q`` weights (1 when not given; the header's own
    order between equals); the first naming English or Simplified Chinese wins. A tag with
    ``q=0`` is refused by the reader, and one with a malformed weight is passed over.
    ``zh-TW`` and ``zh-Hant`` (Traditional Chinese) are not Simplified Chinese.
    """
    weighed: list[tuple[float, int, Language]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, parameters = part.strip().partition(";")
        language = language_of(tag) if tag.strip() not in ("", "*") else None
        if language is None:
            continue
        weight = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = -1.0
        if 0 < weight <= 1:
            weighed.append((-weight, position, language))
    return min(weighed)[2] if weighed else None


def request_language(
    chosen: str | None, remembered: str | None, accepted: str | None, server: Language
) -> Language:
    """The language of a request: ``chosen`` (``?lang=``), else ``remembered`` (the cookie),
    else ``accepted`` (``Accept-Language``), else ``server``; each that names no language
    Seatrial speaks is passed over."""
    for value in (chosen, remembered):
        language = language_of(value) if value else None
        if language is not None:
            return language
    language = accepted_language(accepted) if accepted else None
    return language or server


def _cookie(headers: Sequence[tuple[bytes, bytes]]) -> str | None:
    """The ``seatrial_lang`` cookie of a request's raw headers."""
    for name, value in headers:
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 (a malformed cookie header chooses nothing)
                continue
            if LANGUAGE_COOKIE in jar:
                return jar[LANGUAGE_COOKIE].value
    return None


class ReaderLanguage:
    """ASGI middleware: answers each request in its reader's language (module docstring), and
    remembers a language chosen with ``?lang=`` in a cookie."""

    def __init__(self, app: ASGIApp, language: Language = "en") -> None:
        self.app = app
        self.language = language

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        asked = query.get(LANGUAGE_PARAMETER)
        chosen = language_of(asked) if asked else None
        headers = scope.get("headers", [])
        accepted = next((v.decode("latin-1") for k, v in headers if k == b"accept-language"), None)
        language = request_language(asked, _cookie(headers), accepted, self.language)

        async def send_remembering(message: Message) -> None:
            if message["type"] == "http.response.start" and chosen is not None:
                cookie = (
                    f"{LANGUAGE_COOKIE}={_TAGS[chosen]}; Path=/; Max-Age={COOKIE_MAX_AGE}; "
                    "SameSite=Lax; HttpOnly"
                )
                MutableHeaders(scope=message).append("set-cookie", cookie)
            await send(message)

        with use_language(language):
            await self.app(scope, receive, send_remembering)


@dataclass(frozen=True)
class LanguageLink:
    """One language of the switch every page shows."""

    name: str
    """The language named in itself (``中文``)."""
    href: str
    """The page being read, in that language: its path and query, ``lang`` set."""
    tag: str
    """Its ``hreflang`` (``zh-CN``, ``en``)."""
    current: bool
    """Whether the page is in this language now."""


def language_links(request: Request) -> list[LanguageLink]:
    """The switch's links: the page being read (same path, same query) in each language."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != LANGUAGE_PARAMETER]
    now = current_language()
    path = "/" + request.url.path.lstrip("/")  # never "//host/...", which leaves the site
    links = []
    for language in LANGUAGES:
        query = urlencode([*kept, (LANGUAGE_PARAMETER, _TAGS[language])])
        tag = "zh-CN" if language == "zh_CN" else "en"
        links.append(
            LanguageLink(LANGUAGE_NAMES[language], f"{path}?{query}", tag, language == now)
        )
    return links
