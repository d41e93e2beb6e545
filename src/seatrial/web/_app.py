"""The FastAPI application: pages under ``/``, the JSON API under ``/api/``, static assets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from seatrial._version import __version__
from seatrial.dataset import Masker
from seatrial.i18n import Language
from seatrial.store import Store
from seatrial.web import (
    _api_docs,
    _board,
    _cases,
    _compare,
    _daily,
    _ingest,
    _metrics,
    _pending,
    _review,
    _runs,
    _schedules,
    _traces,
)
from seatrial.web._language import ReaderLanguage
from seatrial.web._security import LOOPBACK_NAMES, Guard, SecurityHeaders, check_token

if TYPE_CHECKING:
    from seatrial.config import ScheduleConfig

TOKEN_ENV = "SEATRIAL_TOKEN"
"""Environment variable holding the token ``seatrial serve --token`` otherwise takes."""

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts that serve without a token: only this machine can reach them."""

STATIC = Path(__file__).parent / "static"


def create_app(
    store: Store,
    *,
    token: str | None = None,
    user: str = "",
    loopback_only: bool = False,
    masker: Masker | None = None,
    schedules: Sequence[ScheduleConfig] = (),
    scheduling: bool = False,
    language: Language = "en",
) -> FastAPI:
    """The dashboard over ``store``. With ``token``, every request must carry it (401 else).

    A ``token`` shorter than ``MIN_TOKEN_LENGTH`` is refused (``ConfigError``).

    ``user`` is who labels made in the browser are recorded as when the form names nobody.
    ``loopback_only`` (what ``seatrial serve`` sets without a token) refuses requests whose
    Host header is not a loopback name (DNS rebinding). Writes from another origin are always
    refused (403).

    ``masker`` masks what the OTLP receiver (``POST /v1/traces``) stores; the default masks
    the built-in kinds only (``seatrial serve`` passes the project's ``mask:`` settings).

    ``schedules`` (seatrial.yaml ``schedules:``) are shown at ``/schedules``; ``scheduling``
    says whether this server runs them.

    ``language`` is what a page is written in when its reader says nothing (``?lang=``, the
    ``seatrial_lang`` cookie, ``Accept-Language``; web/_language.py).
    """
    check_token(token)
    app = FastAPI(
        title="Seatrial",
        version=__version__,
        description="Runs, cases, traces, comparisons, gates and the review queue of a store.",
        openapi_url="/api/openapi.json",
        docs_url=None,  # _api_docs serves it, under its own content policy
        redoc_url=None,
    )
    app.state.store = store
    app.state.user = user
    app.state.masker = masker or Masker()
    app.state.schedules = tuple(schedules)
    app.state.scheduling = scheduling
    hosts = LOOPBACK_NAMES if loopback_only and not token else None
    app.add_middleware(ReaderLanguage, language=language)
    app.add_middleware(Guard, token=token or None, hosts=hosts)
    # Added last, so outermost: the 401 and 403 answers of Guard carry the headers too.
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for module in (
        _api_docs,
        _runs,
        _cases,
        _compare,
        _board,
        _review,
        _ingest,
        _traces,
        _pending,
        _daily,
    ):
        app.include_router(module.router)
    app.include_router(_metrics.router)
    app.include_router(_schedules.router)
    return app
