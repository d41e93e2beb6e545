"""Named queries over the review queue and the human labels: a page of the queue, the next
open item, and counts.

The queue is read a page at a time (``review_items`` is indexed on ``(status, created_at)``);
labelling goes through :class:`Store`'s own methods, so every reader shares one queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import and_, func, or_, select

from seatrial.i18n import gettext as _
from seatrial.store._judging import ReviewItem
from seatrial.store._reads import reading
from seatrial.store._schema import labels, review_items

if TYPE_CHECKING:
    from seatrial.store._store import Store


@dataclass(frozen=True)
class ReviewQueuePage:
    """One page of the review queue, oldest first."""

    total: int
    """Items matching the status asked for."""
    page: int
    """This page's number, from 1 (clamped to the pages there are)."""
    pages: int
    """How many pages there are (at least 1)."""
    items: list[ReviewItem]
    """The items on this page."""


def review_queue_page(store: Store, status: str | None, page: int, size: int) -> ReviewQueuePage:
    """Page ``page`` (from 1) of the items with ``status`` (every item when None), ``size``
    a page, oldest first; a page past the last gives the last, one before the first the first.
    """
    where = [] if status is None else [review_items.c.status == status]
    with reading(store, _("read the review queue")) as connection:
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
    return ReviewQueuePage(total=total, page=page, pages=pages, items=items)


def next_open_review_id(store: Store, after: ReviewItem) -> str | None:
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
    with reading(store, _("read the review queue")) as connection:
        found = connection.execute(query).scalar()
    return None if found is None else str(found)


def open_review_count(store: Store) -> int:
    """Items of the review queue waiting for a person."""
    query = select(func.count()).select_from(review_items).where(review_items.c.status == "open")
    with reading(store, _("count the review queue")) as connection:
        return int(connection.execute(query).scalar_one())


def label_counts(store: Store) -> dict[str, int]:
    """Human labels stored, per source (``review``: labelled in the queue)."""
    query = select(labels.c.source, func.count()).group_by(labels.c.source)
    with reading(store, _("count the human labels")) as connection:
        return {str(source): int(n) for source, n in connection.execute(query)}
