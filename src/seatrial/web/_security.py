"""Who may talk to the dashboard: the token, the Host header, and the origin of writes.

- With a token, every request must carry it: ``Authorization: Bearer TOKEN``, or once
  ``?token=TOKEN`` in a link, after which a ``SameSite=Strict`` cookie carries it (so a
  browser can follow links). Compared in constant time.
- Without a token ``seatrial serve`` serves only this machine, and only under a loopback
  name (``hosts``): a request whose ``Host`` is not ``127.0.0.1``, ``localhost`` or ``[::1]``
  is refused, so a web page elsewhere cannot reach it by rebinding its own DNS name to
  127.0.0.1.
- Always: a request that changes something (any method but GET, HEAD, OPTIONS) must come from
  the dashboard's own pages: an ``Origin`` (or, without one, ``Referer``) naming another host
  is refused, so another site cannot make a browser post a label (cross-site request forgery).
- Every answer (pages, JSON, static files, the 401 and 403 above) carries ``HEADERS``: no
  other site may frame a page (so it cannot trick a click on ``/pending``'s approve button),
  scripts run only from the dashboard's own files, and no answer is sniffed into another type.
- A token is at least ``MIN_TOKEN_LENGTH`` characters (``check_token``).
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _

COOKIE = "seatrial_token"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

MIN_TOKEN_LENGTH = 16
"""The shortest token ``seatrial serve`` accepts: a short one is guessed (``openssl rand -hex
16`` makes 32 characters)."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        # The timeline places its bars with style attributes; no <style> element is allowed.
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
"""What a page may load: only the dashboard's own scripts (no inline script), and no framing."""

HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
}
"""Sent with every answer; ``X-Frame-Options`` says ``frame-ancestors`` to older browsers."""


def check_token(token: str | None) -> None:
    """Refuse a token shorter than ``MIN_TOKEN_LENGTH`` (a ``ConfigError``: exit 2)."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(
            _(
                "the token is {length} characters long; it must have at least {least} so it "
                "cannot be guessed: make one with `openssl rand -hex 16`"
            ).format(length=len(token), least=MIN_TOKEN_LENGTH)
        )


def _host_name(host: str) -> str:
    """``127.0.0.1:8700`` -> ``127.0.0.1``; ``[::1]:8700`` -> ``[::1]``."""
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _cross_site(request: Request) -> bool:
    """A write whose Origin or Referer names a host other than the one it was sent to."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source or source == "null":
        return source == "null"
    return urlsplit(source).netloc.lower() != request.headers.get("host", "").lower()


class Guard(BaseHTTPMiddleware):
    """Answers 401 without the token (when there is one), 403 to foreign hosts and origins."""

    def __init__(
        self, app: ASGIApp, token: str | None, hosts: frozenset[str] | None = None
    ) -> None:
        super().__init__(app)
        self._token = token.encode() if token else None
        self._hosts = hosts

    def _matches(self, given: str | None) -> bool:
        assert self._token is not None
        return given is not None and hmac.compare_digest(given.encode(), self._token)

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.method not in SAFE_METHODS and _cross_site(request):
            return PlainTextResponse(
                "403: a change must come from the dashboard's own pages", status_code=403
            )
        if self._token is None:
            host = _host_name(request.headers.get("host", "")).lower()
            if self._hosts is not None and host not in self._hosts:
                return PlainTextResponse(
                    f"403: without a token this dashboard answers only to 127.0.0.1 or "
                    f"localhost, not {host!r}; start it with --token to serve other names",
                    status_code=403,
                )
            return await call_next(request)
        header = request.headers.get("authorization", "")
        bearer = header[7:] if header.lower().startswith("bearer ") else None
        query = request.query_params.get("token")
        if self._matches(bearer) or self._matches(request.cookies.get(COOKIE)):
            return await call_next(request)
        if self._matches(query):
            response = await call_next(request)
            response.set_cookie(COOKIE, query or "", httponly=True, samesite="strict")
            return response
        return PlainTextResponse(
            "401: this dashboard needs its token (Authorization: Bearer TOKEN, or ?token=TOKEN)",
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )


class SecurityHeaders:
    """Adds ``HEADERS`` to every HTTP answer; an answer that sets its own policy keeps it.

    Only ``/api/docs`` sets its own (Swagger UI's script comes from its CDN). Plain ASGI
    rather than ``BaseHTTPMiddleware`` so static files and streamed answers pass untouched.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message["headers"] = headers
            await send(message)

        await self._app(scope, receive, send_with_headers)
