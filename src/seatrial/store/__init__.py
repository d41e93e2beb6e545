"""The store: runs, their cases, attempts and flat spans, the spend ledger, and the judge's
calibrations, review queue and human labels, in SQLite (default) or PostgreSQL.

``Store.open()`` opens ``.seatrial/seatrial.db`` in the project folder, or the database that
``$SEATRIAL_DB_URL`` (``--db``) names, and migrates its schema with Alembic.
"""

from seatrial.store._codec import EncodedAttempts, encode_attempts
from seatrial.store._judging import (
    QUEUE_SOURCE,
    REVIEW_STATUSES,
    ReviewItem,
    StoredLabel,
)
from seatrial.store._ledger import LEDGER_FORMAT_VERSION, ModelCallRow
from seatrial.store._schema import SCHEMA_REVISION
from seatrial.store._store import RUN_STATUSES, Store
from seatrial.store._url import DB_URL_ENV, DEFAULT_DB_PATH, mask_url, resolve_url

__all__ = [
    "DB_URL_ENV",
    "DEFAULT_DB_PATH",
    "EncodedAttempts",
    "LEDGER_FORMAT_VERSION",
    "ModelCallRow",
    "QUEUE_SOURCE",
    "REVIEW_STATUSES",
    "RUN_STATUSES",
    "ReviewItem",
    "SCHEMA_REVISION",
    "Store",
    "StoredLabel",
    "encode_attempts",
    "mask_url",
    "resolve_url",
]
