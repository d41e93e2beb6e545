"""Generated cases waiting for a person: approve into a golden set, or reject."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
