"""Links to the dashboard from what Seatrial writes elsewhere (pull-request comments, alerts)."""

from __future__ import annotations

from urllib.parse import urlencode


def dashboard_link(
    dashboard_url: str | None, path: str, query: dict[str, str] | None = None
) -> str | None:
    """``dashboard_url`` + ``path`` (+ ``query``, encoded); None without a dashboard."""
    if not dashboard_url:
        return None
    return f"{dashboard_url.rstrip('/')}{path}" + (f"?{urlencode(query)}" if query else "")
