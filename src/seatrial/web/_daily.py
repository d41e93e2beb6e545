"""The daily report page: the day's runs, new failures, clusters, cost."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
