"""The "not found" answer of the case and compare pages: a 404 page saying what is missing."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse

from seatrial.i18n import gettext as _
from seatrial.web._deps import TEMPLATES

_PAGE = TEMPLATES.env.from_string(
    """{% extends "base.html" %}
{% block title %}{{ words.title }}{% endblock %}
{% block content %}
<h1>{{ words.title }}</h1>
<p class="warning-box" id="not-found">{{ message }}</p>
<p><a href="/runs">{{ words.runs }}</a> · <a href="/compare">{{ words.compare }}</a></p>
{% endblock %}"""
)


def not_found(request: Request, message: str) -> HTMLResponse:
    """A 404 page with ``message`` (escaped) and links back to the runs."""
    words = {"title": _("Not found"), "runs": _("All runs"), "compare": _("Compare two runs")}
    page = _PAGE.render(request=request, message=message, words=words)
    return HTMLResponse(page, status_code=404)
