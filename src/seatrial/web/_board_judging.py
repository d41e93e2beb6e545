"""What the review queue and calibration pages show: a page of the queue (read through the
store's ``review_queue_page``) and calibrations grouped per judge and prompt.

The store's own methods label items, so the browser and ``seatrial review`` share one queue.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from seatrial.judge import Calibration
from seatrial.store import ReviewItem, Store, review_queue_page

STATUSES = ("open", "labelled", "all")
"""The queue's status filter: waiting for a person, labelled, or every item."""
LABELS = ("pass", "fail", "skip")
"""What the review form accepts: a verdict, or skip (leave the item open, go to the next)."""


class ReviewPage(BaseModel):
    """One page of the review queue, oldest first."""

    status: str
    """The filter: ``open``, ``labelled`` or ``all``."""
    total: int
    """Items matching the filter."""
    page: int
    """This page's number, from 1."""
    pages: int
    """How many pages the filter has."""
    items: list[ReviewItem] = Field(default_factory=list)
    """The items on this page."""


class CalibrationView(BaseModel):
    """Every stored calibration, newest first, and how many human labels there are."""

    calibrations: list[Calibration] = Field(default_factory=list)
    """Calibrations of every judge, newest first."""
    labels: dict[str, int] = Field(default_factory=dict)
    """Human labels stored, per source (``review``: labelled in the queue)."""


def queue_page(store: Store, status: str, page: int, size: int) -> ReviewPage:
    """Page ``page`` of the queue filtered by ``status`` (one of :data:`STATUSES`)."""
    found = review_queue_page(store, None if status == "all" else status, page, size)
    return ReviewPage(
        status=status, total=found.total, page=found.page, pages=found.pages, items=found.items
    )


def calibration_chart(found: list[Calibration]) -> list[dict[str, Any]]:
    """One series per judge model and prompt: agreement and kappa over time (oldest first)."""
    series: dict[tuple[str, str, str], list[Calibration]] = defaultdict(list)
    for calibration in sorted(found, key=lambda c: c.created_at):
        key = (calibration.judge_model, calibration.prompt_version, calibration.prompt_hash)
        series[key].append(calibration)
    return [
        {
            "name": f"{model} {version or hash_[:8]}",
            "agreement": [[c.created_at * 1000, round(c.agreement, 4)] for c in items],
            "kappa": [
                [c.created_at * 1000, None if c.kappa is None else round(c.kappa, 4)] for c in items
            ],
        }
        for (model, version, hash_), items in series.items()
    ]
