"""The judge's side of the store: calibrations, the review queue, and human labels.

A calibration says how far one judge (model + prompt hash) agreed with people; the gate reads
the newest one. Review items are verdicts a person should look at (a WARNING, a low
confidence, a judge that disagreed with the rules); labelling one stores a human label, which
later calibrations can use (``seatrial judge calibrate --labels queue``). Review items and
labels carry no foreign key to ``runs``: people's labels are worth keeping after a run is gone.

The records are defined here, not in :mod:`seatrial.judge`: the judge writes calibrations
through the store, so the store importing the judge would make the two depend on each other.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from seatrial.errors import InputError, StoreError
from seatrial.i18n import gettext as _
from seatrial.store._bulk import insert_many
from seatrial.store._schema import calibrations, labels, review_items
from seatrial.store._translate import translated
from seatrial.store._url import mask_url

ReviewWhy = Literal["warning", "low_confidence", "disagreement"]
HumanVerdict = Literal["pass", "fail"]
REVIEW_STATUSES = ("open", "labelled")
"""The statuses a review item can have: waiting for a person, or labelled by one."""
QUEUE_SOURCE = "review"
"""The ``source`` of labels given in the review queue."""


class Calibration(BaseModel):
    """How well one judge (model + prompt) agreed with human labels, measured once."""

    model_config = ConfigDict(frozen=True)

    judge_model: str
    """The gateway model name of the judge that was measured."""
    prompt_hash: str
    """sha256 of the prompt template measured; a new prompt needs a new calibration."""
    prompt_version: str = ""
    """Version of the prompt template measured, e.g. ``v1`` (for people; the hash decides)."""
    created_at: float
    """When the calibration was made, seconds since the epoch."""
    items: int
    """Number of labelled items the judge was compared on."""
    agreement: float
    """Share of items where the judge agreed with people."""
    kappa: float | None
    """Cohen's kappa; ``None`` where it is undefined (a single label on both sides)."""
    kappa_low: float | None = None
    """Lower bound of the bootstrap interval for kappa."""
    kappa_high: float | None = None
    """Upper bound of the bootstrap interval for kappa."""
    base_rate: float
    """Share of human labels that were the positive label (pass)."""
    report: dict[str, Any] = Field(default_factory=dict)
    """The full agreement report (``AgreementReport.model_dump()``)."""


class ReviewItem(BaseModel):
    """A judge verdict waiting for (or given) a person's label."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """A random hex id made by Seatrial; ``seatrial review --label ID`` names it."""
    run_id: str
    """The run whose attempt was judged."""
    case_id: str
    """The case judged."""
    attempt: int
    """The attempt (repeat) number judged."""
    assertion_id: str
    """The id of the L3 assertion whose verdict is to be reviewed."""
    why: ReviewWhy
    """Why a person should look: the judge said WARNING, was not confident enough, or
    disagreed with the rule-based assertions."""
    judge_model: str = ""
    """The gateway model name of the judge."""
    judge_verdict: str
    """The judge's verdict: PASS, FAIL or WARNING."""
    judge_reason: str = ""
    """The judge's reason, in its words."""
    confidence: float | None = None
    """The judge's confidence in [0, 1], when it gave one."""
    input: str
    """What the user said: the turns, one per line."""
    output: str
    """What the agent replied (the final reply)."""
    category: str = ""
    """The case's category (e.g. 退款), for per-category agreement."""
    created_at: float = Field(default_factory=time.time)
    """When the item was queued (Unix seconds)."""
    status: Literal["open", "labelled"] = "open"
    """``open`` until a person labels it, then ``labelled``."""
    label: HumanVerdict | None = None
    """The person's verdict, once labelled."""
    failure_type: str | None = None
    """The failure type the person named, when they said fail."""
    note: str = ""
    """The person's note."""
    who: str | None = None
    """Who labelled it."""
    labelled_at: float | None = None
    """When it was labelled (Unix seconds)."""


class StoredLabel(BaseModel):
    """A person's pass/fail label of one reply, as calibration reads it."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """A random hex id made by Seatrial."""
    source: str = QUEUE_SOURCE
    """Where the label was given: ``review`` for the review queue."""
    item_id: str | None = None
    """The review item labelled, when the label came from the queue."""
    input: str
    """What the user said."""
    output: str
    """What the agent replied."""
    label: HumanVerdict
    """The person's verdict."""
    category: str = ""
    """The item's category, for per-category agreement."""
    failure_type: str | None = None
    """The failure type the person named, when they said fail."""
    note: str = ""
    """The person's note."""
    who: str
    """Who labelled it."""
    labelled_at: float = Field(default_factory=time.time)
    """When it was labelled (Unix seconds)."""


M = TypeVar("M", bound=BaseModel)

_ITEM_COLUMNS = tuple(ReviewItem.model_fields)
_LABEL_COLUMNS = tuple(StoredLabel.model_fields)


class JudgingMixin:
    """The judge's methods of :class:`~seatrial.store.Store`."""

    # Set by Store.__init__; declared here so the methods type-check on their own.
    _engine: Engine
    _writer: Engine

    # Calibrations.

    def save_calibration(self, calibration: Calibration) -> None:
        """Store one calibration of a judge (model + prompt hash)."""
        row = {
            "id": uuid.uuid4().hex,
            "judge_model": calibration.judge_model,
            "prompt_hash": calibration.prompt_hash,
            "created_at": calibration.created_at,
            "items": calibration.items,
            "agreement": calibration.agreement,
            "record": calibration.model_dump(mode="json"),
        }
        with self._judging_write(
            _("save a calibration of judge {judge_model}").format(
                judge_model=repr(calibration.judge_model)
            )
        ) as c:
            c.execute(insert(calibrations), [row])

    def latest_calibration(self, judge_model: str, prompt_hash: str) -> Calibration | None:
        """The newest calibration of this judge model with this prompt; None if never made."""
        query = (
            select(calibrations.c.record)
            .where(calibrations.c.judge_model == judge_model)
            .where(calibrations.c.prompt_hash == prompt_hash)
            .order_by(calibrations.c.created_at.desc(), calibrations.c.id.desc())
            .limit(1)
        )
        with self._judging_read(
            _("read the calibration of judge {judge_model}").format(judge_model=repr(judge_model))
        ) as c:
            record = c.execute(query).scalar()
        return None if record is None else self._calibration(record)

    def calibrations(self, judge_model: str | None = None) -> list[Calibration]:
        """Calibrations newest first, of every judge or of one judge model."""
        query = select(calibrations.c.record).order_by(
            calibrations.c.created_at.desc(), calibrations.c.id.desc()
        )
        if judge_model is not None:
            query = query.where(calibrations.c.judge_model == judge_model)
        with self._judging_read(_("list calibrations")) as c:
            records = c.execute(query).scalars().all()
        return [self._calibration(record) for record in records]

    # The review queue.

    def add_review_items(self, items: Sequence[ReviewItem]) -> None:
        """Queue review items, all in one transaction."""
        if not items:
            return
        values = [tuple(getattr(item, name) for name in _ITEM_COLUMNS) for item in items]
        with self._judging_write(
            _("queue {count} review items").format(count=len(items))
        ) as connection:
            insert_many(connection, review_items, _ITEM_COLUMNS, values)

    def review_items(
        self, status: str | None = "open", run_id: str | None = None
    ) -> list[ReviewItem]:
        """Review items oldest first: ``open`` ones (default), ``labelled`` ones, or all (None).

        Only those of one run when ``run_id`` is given.
        """
        if status is not None and status not in REVIEW_STATUSES:
            raise InputError(
                _("review status must be one of {names}, not {status}").format(
                    names=", ".join(REVIEW_STATUSES), status=repr(status)
                )
            )
        query = select(review_items).order_by(review_items.c.created_at, review_items.c.id)
        if status is not None:
            query = query.where(review_items.c.status == status)
        if run_id is not None:
            query = query.where(review_items.c.run_id == run_id)
        with self._judging_read(_("read the review queue")) as connection:
            rows = connection.execute(query).mappings().all()
        return [self._record(ReviewItem, row) for row in rows]

    def review_item(self, item_id: str) -> ReviewItem:
        """One review item by its id, or a unique prefix of it."""
        with self._judging_read(
            _("read review item {item_id}").format(item_id=repr(item_id))
        ) as connection:
            return self._record(ReviewItem, self._item_row(connection, item_id))

    def label_review_item(
        self,
        item_id: str,
        label: HumanVerdict,
        failure_type: str | None,
        note: str,
        who: str,
    ) -> ReviewItem:
        """Label a review item (its id or a unique prefix) and store the label.

        Labelling an item again replaces its label: people correct their mistakes.
        Returns the item as labelled.
        """
        if label not in ("pass", "fail"):
            raise InputError(_("a label is pass or fail, not {label}").format(label=repr(label)))
        if not who:
            raise InputError(_("say who labels the item (--who, default $USER)"))
        now = time.time()
        with self._judging_write(
            _("label review item {item_id}").format(item_id=repr(item_id))
        ) as connection:
            row = self._item_row(connection, item_id)
            full_id = row["id"]
            changes: dict[str, Any] = {
                "status": "labelled",
                "label": label,
                "failure_type": failure_type if label == "fail" else None,
                "note": note,
                "who": who,
                "labelled_at": now,
            }
            connection.execute(
                update(review_items).where(review_items.c.id == full_id).values(**changes)
            )
            stored = StoredLabel(
                item_id=full_id,
                input=row["input"],
                output=row["output"],
                label=label,
                category=row["category"],
                failure_type=changes["failure_type"],
                note=note,
                who=who,
                labelled_at=now,
            )
            existing = connection.execute(
                select(labels.c.id).where(labels.c.item_id == full_id)
            ).scalar()
            if existing is None:
                connection.execute(insert(labels), [stored.model_dump()])
            else:
                fields = stored.model_dump(exclude={"id", "item_id", "source"})
                connection.execute(update(labels).where(labels.c.id == existing).values(**fields))
            return self._record(ReviewItem, {**row, **changes})

    def add_labels(self, items: Sequence[StoredLabel]) -> None:
        """Store human labels given outside the queue (e.g. imported from a file)."""
        if not items:
            return
        values = [tuple(getattr(item, name) for name in _LABEL_COLUMNS) for item in items]
        with self._judging_write(_("store {count} labels").format(count=len(items))) as connection:
            insert_many(connection, labels, _LABEL_COLUMNS, values)

    def labels(self, source: str | None = None) -> list[StoredLabel]:
        """Human labels oldest first, of every source or of one (``review``: the queue)."""
        query = select(labels).order_by(labels.c.labelled_at, labels.c.id)
        if source is not None:
            query = query.where(labels.c.source == source)
        with self._judging_read(_("read the human labels")) as connection:
            rows = connection.execute(query).mappings().all()
        return [self._record(StoredLabel, row) for row in rows]

    # Helpers.

    def _item_row(self, connection: Connection, item_id: str) -> dict[str, Any]:
        if not item_id:
            raise InputError(_("no review item id given; `seatrial review` lists the open items"))
        exact = connection.execute(select(review_items).where(review_items.c.id == item_id))
        row = exact.mappings().first()
        if row is not None:
            return dict(row)
        # substr, not LIKE: LIKE ignores case in SQLite and treats % and _ as wildcards.
        rows = connection.execute(
            select(review_items)
            .where(func.substr(review_items.c.id, 1, len(item_id)) == item_id)
            .limit(2)
        )
        matches = [dict(r) for r in rows.mappings().all()]
        if not matches:
            raise InputError(
                _(
                    "no review item {item_id} in the store at {url}; `seatrial review "
                    "--list` shows the open items and their ids"
                ).format(item_id=repr(item_id), url=mask_url(self._engine.url))
            )
        if len(matches) > 1:
            raise InputError(
                _(
                    "review item id prefix {item_id} matches more than one item; give "
                    "more characters of the id"
                ).format(item_id=repr(item_id))
            )
        return matches[0]

    def _calibration(self, record: Any) -> Calibration:
        return self._record(Calibration, record)

    def _record(self, model: type[M], row: Any) -> M:
        try:
            return model.model_validate(dict(row))
        except ValidationError as exc:
            raise StoreError(
                _(
                    "the store at {url} holds a {model} this Seatrial cannot read "
                    "({value}); was it written by a newer Seatrial? upgrade seatrial"
                ).format(
                    url=mask_url(self._engine.url),
                    model=model.__name__,
                    value=exc.errors()[0]["msg"],
                )
            ) from exc

    @contextmanager
    def _judging_write(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._writer.begin() as connection:
            yield connection

    @contextmanager
    def _judging_read(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._engine.connect() as connection:
            yield connection
