"""``/api/docs``: Swagger UI over the OpenAPI document, under a content policy of its own.

Swagger UI's script and stylesheet come from its CDN and it starts from one inline script,
which the dashboard's policy (``_security.CONTENT_SECURITY_POLICY``) refuses; this page's
policy allows that CDN and that one script, by its hash, and still refuses to be framed.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

router = APIRouter()

CDN = "https://cdn.jsdelivr.net"
"""Where FastAPI's Swagger UI page loads ``swagger-ui-dist`` from."""

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _script_hash(script: str) -> str:
    """A CSP source allowing exactly this inline script."""
    digest = hashlib.sha256(script.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def docs_policy(html: str) -> str:
    """The policy of the Swagger UI page ``html``: its CDN, its inline scripts, no framing."""
    scripts = " ".join(_script_hash(script) for script in _INLINE_SCRIPT.findall(html))
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src 'self' {CDN} {scripts}",
            f"style-src 'self' 'unsafe-inline' {CDN}",
            "img-src 'self' data: https://fastapi.tiangolo.com",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


@router.get("/api/docs", include_in_schema=False)
def api_docs() -> HTMLResponse:
    """The OpenAPI document, browsable."""
    page = get_swagger_ui_html(
        openapi_url="/api/openapi.json", title="Seatrial API", oauth2_redirect_url=None
    )
    page.headers["content-security-policy"] = docs_policy(bytes(page.body).decode())
    return page
