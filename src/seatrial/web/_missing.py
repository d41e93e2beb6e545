"""The "not found" answer of the case and compare pages: a 404 page saying what is missing."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse

from seatrial.web._deps import TEMPLATES

_PAGE = TEMPLATES.env.from_string(
    """{% extends "base.html" %}
{% block title %}Not found{% endblock %}
{% block content %}
<h1>Not found</h1>
<p class="warning-box" id="not-found">{{ message }}</p>
<p><a href="/runs">All runs</a> · <a href="/compare">Compare two runs</a></p>
{% endblock %}"""
)


def not_found(request: Request, message: str) -> HTMLResponse:
    """A 404 page with ``message`` (escaped) and links back to the runs."""
    return HTMLResponse(_PAGE.render(request=request, message=message), status_code=404)
