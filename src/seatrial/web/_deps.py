"""What every page and API route needs: the store, the templates, paging, small formatters."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Protocol

from fastapi import Path as PathPart
from fastapi import Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from seatrial.i18n import current_language, gettext, ngettext, pgettext
from seatrial.i18n import render as render_message
from seatrial.record import failure_type_word, verdict_word
from seatrial.store import Store
from seatrial.web._language import language_links

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
"""Jinja2 with autoescaping on (the default for .html): agent replies are untrusted input.
Its text is marked as in Python (``_()``, ``ngettext``, ``pgettext``, ``{name}`` placeholders
filled with ``.format``), read from seatrial.i18n's catalogs in the request's language."""

PAGE_SIZE = 50
"""Rows per page in lists."""

LARGEST_NUMBER = 2**31 - 1
"""The largest page or attempt number a request may name: what every store's integer
columns and offsets hold (a larger one would fail inside the database, a 500)."""

PageNumber = Annotated[int, Query(ge=1, le=LARGEST_NUMBER)]
"""A list's ``page`` (from 1); out of range is a 422 naming the parameter."""
AttemptNumber = Annotated[int, PathPart(ge=1, le=LARGEST_NUMBER)]
"""An attempt number in a path (from 1)."""
AttemptChoice = Annotated[int | None, Query(ge=1, le=LARGEST_NUMBER)]
"""An attempt number in a query string, optional."""


def store_of(request: Request) -> Store:
    """The store the app reads."""
    store: Store = request.app.state.store
    return store


def render(request: Request, template: str, **context: Any) -> HTMLResponse:
    """A page from ``templates/``, with the request in its context."""
    return TEMPLATES.TemplateResponse(request, template, context)


def when(seconds: float | None) -> str:
    """Unix time as ``YYYY-MM-DD HH:MM`` (UTC), ``-`` for none."""
    if seconds is None:
        return "-"
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M")


def percent(value: float | None, digits: int = 0) -> str:
    """0.425 as ``42%``; ``-`` for none."""
    return "-" if value is None else f"{value * 100:.{digits}f}%"


class _Reasoned(Protocol):
    reason: str
    message: dict[str, Any] | None


def reason_of(said: _Reasoned) -> str:
    """Why an attempt, a case or a check has its verdict, in the reader's language: its
    stored message rendered, or its stored text for runs made before messages were."""
    return render_message(said.message, said.reason)


def check_verdict_word(verdict: str) -> str:
    """An assertion's or a trace check's verdict (``pass``, ``fail``, ``not_evaluated``) in
    the reader's language; another is shown as written."""
    words = {
        "pass": pgettext("check", "pass"),
        "fail": pgettext("check", "fail"),
        "not_evaluated": pgettext("check", "not evaluated"),
    }
    return words.get(verdict, verdict)


def coded(message: str, **values: Any) -> Markup:
    """``message`` (translated text with ``{name}`` placeholders) escaped, each value set in
    it as ``<code>value</code>``, escaped too: a sentence naming a command or a key reads
    whole in either language, its identifiers marked as code."""
    return escape(message).format(
        **{k: Markup("<code>{}</code>").format(v) for k, v in values.items()}
    )


def static_url(path: str) -> str:
    """``/static/PATH``: path-only, never built from the request's Host header (which a
    client chooses), so a forged Host changes no URL in a page."""
    return f"/static/{path}"


def html_lang(language: str) -> str:
    """The ``lang`` of ``<html>`` for a language: ``zh-CN`` for Chinese (``zh``, ``zh_CN``,
    ``zh-Hans`` ...), so browsers pick Simplified Chinese glyphs and fonts; ``en`` otherwise."""
    return "zh-CN" if language.lower().replace("_", "-").split("-")[0] == "zh" else "en"


def page_language(request: Request) -> str:
    """The ``lang`` of the page answering ``request`` (every page's ``<html>`` reads it): the
    request's language, which web/_language.py set for it."""
    return html_lang(current_language())


TEMPLATES.env.add_extension("jinja2.ext.i18n")
# The functions read the language when called, so one installation serves every request.
TEMPLATES.env.install_gettext_callables(  # type: ignore[attr-defined]
    gettext, ngettext, newstyle=False, pgettext=pgettext
)
TEMPLATES.env.filters["verdict"] = verdict_word
TEMPLATES.env.filters["failure_type"] = failure_type_word
TEMPLATES.env.filters["check_verdict"] = check_verdict_word
TEMPLATES.env.filters["reason"] = reason_of
TEMPLATES.env.globals["language_links"] = language_links
TEMPLATES.env.globals["coded"] = coded
TEMPLATES.env.filters["when"] = when
TEMPLATES.env.filters["percent"] = percent
TEMPLATES.env.globals["static_url"] = static_url
TEMPLATES.env.globals["page_language"] = page_language
# ``tojson`` writes Chinese as it is, not as \u escapes (it still escapes <, >, & and ').
TEMPLATES.env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
