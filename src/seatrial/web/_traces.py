"""Production traces: the list of ingested sessions, one as a timeline, "make a case"."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
