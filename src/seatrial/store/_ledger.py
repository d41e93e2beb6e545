"""The spend ledger: one row per model call made through the gateway, and what they cost.

Reports split spend by purpose (the agent under test, Seatrial's judge, case generation) and
budgets sum it per run and per project. Rows carry no foreign key to ``runs``: the gateway
also serves calls made outside a stored run (the proxy on its own, a judge calibration), and
a run's calls may land before the run's header is written.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql.elements import ColumnElement

from seatrial.i18n import gettext as _
from seatrial.store._bulk import insert_many
from seatrial.store._schema import model_calls as calls
from seatrial.store._translate import translated

LEDGER_FORMAT_VERSION = 1
"""Version of the :class:`ModelCallRow` format."""


class ModelCallRow(BaseModel):
    """One model call as the ledger keeps it (never its prompt, answer, or any key)."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """A random hex id made by Seatrial."""
    run_id: str | None = None
    """The run the call belongs to; None for calls made outside a run."""
    case_id: str | None = None
    """The case being run when the call was made."""
    attempt: int | None = None
    """The attempt (repeat) number."""
    purpose: Literal["agent", "judge", "generation", "simulator"] = "agent"
    """Who called: the agent under test, Seatrial's judge, case generation, or a simulated
    user."""
    model: str
    """The configured model name that answered (or was last tried)."""
    provider_model: str = ""
    """The model id the provider reported (the pinned version)."""
    input_tokens: int = Field(default=0, ge=0)
    """Prompt tokens, cached ones included."""
    output_tokens: int = Field(default=0, ge=0)
    """Completion tokens."""
    cached_input_tokens: int = Field(default=0, ge=0)
    """Prompt tokens served from the provider's prompt cache."""
    cost_usd: float = Field(default=0.0, ge=0)
    """What the call cost in US dollars (0 when served from Seatrial's cache or unpriced)."""
    priced: bool | None = None
    """Whether its model had a price; False: ``cost_usd`` is 0 for want of one, so the real
    cost is unknown. None for rows written before Seatrial recorded it (schema 0009)."""
    latency_ms: float = Field(default=0.0, ge=0)
    """Wall time of the call, fallbacks included."""
    cached: bool = False
    """Served from Seatrial's response cache."""
    fallback_used: bool = False
    """A model other than the first of the chain answered."""
    fault: str | None = None
    """The injected fault, when one was."""
    created_at: float = Field(default_factory=time.time)
    """When the call finished (Unix seconds)."""
    status: Literal["ok", "timeout", "error"] = "ok"
    """``ok`` for an answered call; ``timeout`` or ``error`` for one that failed (its tokens
    are those known, often 0, and it cost nothing)."""


_COLUMNS = tuple(ModelCallRow.model_fields)


class LedgerMixin:
    """The ledger's methods of :class:`~seatrial.store.Store`."""

    # Set by Store.__init__; declared here so the methods type-check on their own.
    _engine: Engine
    _writer: Engine

    def record_model_calls(self, rows: Sequence[ModelCallRow]) -> None:
        """Store model calls in the ledger, all in one transaction."""
        if not rows:
            return
        values = [tuple(getattr(row, name) for name in _COLUMNS) for row in rows]
        with self._ledger_write(
            _("record {count} model calls").format(count=len(rows))
        ) as connection:
            insert_many(connection, calls, _COLUMNS, values)

    def spend(self, run_id: str | None = None, purpose: str | None = None) -> float:
        """US dollars spent on model calls: of one run and/or one purpose, else of the store."""
        query = select(func.coalesce(func.sum(calls.c.cost_usd), 0.0))
        for condition in _filters(run_id, purpose=purpose):
            query = query.where(condition)
        with self._ledger_read(_("sum the spend on model calls")) as connection:
            return float(connection.execute(query).scalar_one())

    def spend_by_purpose(self, run_id: str | None = None) -> dict[str, float]:
        """US dollars spent per purpose (``agent``, ``judge``, ``generation``) in a run.

        Without ``run_id``, over the whole store. Purposes with no calls are absent.
        """
        query = select(calls.c.purpose, func.sum(calls.c.cost_usd)).group_by(calls.c.purpose)
        for condition in _filters(run_id):
            query = query.where(condition)
        with self._ledger_read(_("sum the spend on model calls by purpose")) as connection:
            rows = connection.execute(query).all()
        return {str(purpose): float(total or 0.0) for purpose, total in sorted(rows)}

    def unpriced_models(self, run_id: str) -> list[str]:
        """The configured names of a run's models that had no price (their calls were booked
        at $0 without being free), sorted."""
        query = (
            select(calls.c.model)
            .distinct()
            .where(calls.c.run_id == run_id, calls.c.priced.is_(False))
            .order_by(calls.c.model)
        )
        with self._ledger_read(
            _("find the unpriced models of run {run_id}").format(run_id=repr(run_id))
        ) as connection:
            return [str(model) for model in connection.execute(query).scalars()]

    def served_models(self, run_id: str) -> list[tuple[str, str, int]]:
        """A run's answered calls counted by configured model name and the model id the
        provider reported: ``(model, provider_model, calls)``, sorted."""
        query = (
            select(calls.c.model, calls.c.provider_model, func.count())
            .where(calls.c.run_id == run_id, calls.c.status == "ok")
            .group_by(calls.c.model, calls.c.provider_model)
        )
        with self._ledger_read(
            _("count the served models of run {run_id}").format(run_id=repr(run_id))
        ) as connection:
            rows = connection.execute(query).all()
        return sorted((str(m), str(p or ""), int(n)) for m, p, n in rows)

    def model_calls(
        self, run_id: str, case_id: str | None = None, attempt: int | None = None
    ) -> list[ModelCallRow]:
        """A run's ledger rows (of one case, and one attempt, when given), oldest first."""
        query = select(calls).order_by(calls.c.created_at, calls.c.id)
        for condition in _filters(run_id, case_id=case_id, attempt=attempt):
            query = query.where(condition)
        with self._ledger_read(
            _("read the model calls of run {run_id}").format(run_id=repr(run_id))
        ) as connection:
            rows = connection.execute(query).mappings().all()
        return [ModelCallRow.model_validate(dict(row)) for row in rows]

    @contextmanager
    def _ledger_write(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._writer.begin() as connection:
            yield connection

    @contextmanager
    def _ledger_read(self, action: str) -> Iterator[Connection]:
        with translated(self._engine.url, action), self._engine.connect() as connection:
            yield connection


def _filters(
    run_id: str | None,
    *,
    purpose: str | None = None,
    case_id: str | None = None,
    attempt: int | None = None,
) -> Iterator[ColumnElement[bool]]:
    if run_id is not None:
        yield calls.c.run_id == run_id
    if purpose is not None:
        yield calls.c.purpose == purpose
    if case_id is not None:
        yield calls.c.case_id == case_id
    if attempt is not None:
        yield calls.c.attempt == attempt
