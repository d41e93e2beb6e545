"""What the review queue and calibration pages read: a page of the queue, the next open item,
label counts, and calibrations grouped per judge and prompt.

The queue is read a page at a time (``review_items`` is indexed on ``(status, created_at)``);
the store's own methods label items, so the browser and ``seatrial review`` share one queue.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import and_, func, or_, select
from sqlalchemy.engine import Engine

from seatrial.judge import Calibration
from seatrial.store import ReviewItem
from seatrial.store._schema import labels, review_items

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


def queue_page(engine: Engine, status: str, page: int, size: int) -> ReviewPage:
    """Page ``page`` of the queue filtered by ``status`` (one of :data:`STATUSES`)."""
    where = [] if status == "all" else [review_items.c.status == status]
    with engine.connect() as connection:
        total = int(
            connection.execute(
                select(func.count()).select_from(review_items).where(*where)
            ).scalar_one()
        )
        pages = max(1, -(-total // size))
        page = min(max(1, page), pages)
        rows = connection.execute(
            select(review_items)
            .where(*where)
            .order_by(review_items.c.created_at, review_items.c.id)
            .limit(size)
            .offset((page - 1) * size)
        )
        items = [ReviewItem.model_validate(dict(row)) for row in rows.mappings()]
    return ReviewPage(status=status, total=total, page=page, pages=pages, items=items)


def next_open(engine: Engine, after: ReviewItem) -> str | None:
    """The id of the first open item queued after ``after``; None at the end of the queue."""
    later = or_(
        review_items.c.created_at > after.created_at,
        and_(review_items.c.created_at == after.created_at, review_items.c.id > after.id),
    )
    query = (
        select(review_items.c.id)
        .where(review_items.c.status == "open", later)
        .order_by(review_items.c.created_at, review_items.c.id)
        .limit(1)
    )
    with engine.connect() as connection:
        found = connection.execute(query).scalar()
    return None if found is None else str(found)


def open_count(engine: Engine) -> int:
    """Items waiting for a person."""
    query = select(func.count()).select_from(review_items).where(review_items.c.status == "open")
    with engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def label_counts(engine: Engine) -> dict[str, int]:
    """Human labels stored, per source."""
    query = select(labels.c.source, func.count()).group_by(labels.c.source)
    with engine.connect() as connection:
        return {str(source): int(n) for source, n in connection.execute(query)}


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
