"""Spending limits per run and per project: a warning at ``warn_at``, new calls stopped at 100%.

The store's ledger is the shared count. What a run (or the project) had spent is read from it
when this process first checks, and read again, at most every ``refresh_s`` seconds while a
limit is set, before a call is checked (:meth:`Budget.refresh`); calls priced here since the
last read are added on top. So several processes on one store (Celery workers, two
``seatrial run`` on one project) hold one budget between them: a process sees the others'
spend at most ``refresh_s`` late. A budget can therefore be overspent by what the calls in
flight when the limit is reached cost, plus what the other processes spent in the last
``refresh_s`` seconds (docs/gateway.md, "Budgets across processes").
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from seatrial.errors import BudgetExceeded
from seatrial.gateway._config import BudgetConfig
from seatrial.i18n import gettext as _
from seatrial.store import Store

logger = logging.getLogger("seatrial.gateway")

# Sums of float prices drift (0.7 + 0.2 + 0.1 < 1.0): a limit counts as reached within this.
_EPSILON_USD = 1e-9

DEFAULT_REFRESH_S = 1.0
"""How stale another process's spend may be when a call is checked against a limit."""

_Key = str | None
"""A run id, or None for the whole project."""


@dataclass
class _Spend:
    stored: float
    """The ledger's total at the last read."""
    since: float = 0.0
    """Spent through this budget since that read began."""
    read_at: float = 0.0
    """``time.monotonic()`` of the last read."""

    @property
    def total(self) -> float:
        return self.stored + self.since


class Budget:
    """Checks calls against ``gateway.budgets`` and counts what they cost.

    ``refresh`` then ``check`` before a call raises :class:`~seatrial.errors.BudgetExceeded`
    once a limit is spent; ``add`` after it counts the cost and warns once per limit when
    ``warn_at`` of it is reached. Safe to share between threads.
    """

    def __init__(
        self,
        config: BudgetConfig,
        store: Store | None = None,
        warn: Callable[[str], None] | None = None,
        *,
        refresh_s: float = DEFAULT_REFRESH_S,
    ) -> None:
        """Enforce ``config``; ``store`` supplies the spend of earlier calls and of other
        processes (read again at most every ``refresh_s`` seconds); ``warn`` receives
        warnings.

        Warnings go to the ``seatrial.gateway`` logger when no ``warn`` is given.
        """
        self._config = config
        self._store = store
        self._warn = warn if warn is not None else logger.warning
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._spend: dict[_Key, _Spend] = {}
        self._warned: set[_Key] = set()

    def spent(self, run_id: str | None = None) -> float:
        """US dollars spent so far: by the run, or by the whole project when ``run_id`` is None."""
        with self._lock:
            return self._of(run_id).total

    async def refresh(self, run_id: str | None) -> None:
        """Read again from the store what the limited run and project have spent, when the
        last read is older than ``refresh_s``: other processes' calls count from then on.

        Does nothing without a store or without a limit, so an unlimited gateway never reads.
        """
        if self._store is None:
            return
        keys: list[_Key] = []
        if self._config.run_usd is not None and run_id is not None:
            keys.append(run_id)
        if self._config.project_usd is not None:
            keys.append(None)
        for key in keys:
            now = time.monotonic()
            with self._lock:
                spend = self._spend.get(key)
                if spend is not None and now - spend.read_at < self._refresh_s:
                    continue
                if spend is not None:
                    # Claimed: calls checked meanwhile use the last figure, not a read each.
                    spend.read_at = now
                counted = spend.since if spend is not None else 0.0
            stored = await asyncio.to_thread(self._store.spend, key)
            with self._lock:
                current = self._spend.get(key)
                if current is None:
                    self._spend[key] = _Spend(stored, read_at=now)
                else:
                    # Calls added during the read may be in it as well: counted twice until the
                    # next read, which errs towards stopping early, never towards overspending.
                    current.stored, current.since = stored, current.since - counted
                    current.read_at = now

    def check(self, run_id: str | None) -> None:
        """Refuse a new call when the run's or the project's budget is spent."""
        run_limit, project_limit = self._config.run_usd, self._config.project_usd
        with self._lock:
            if run_limit is not None and run_id is not None:
                spent = self._of(run_id).total
                if spent >= run_limit - _EPSILON_USD:
                    raise BudgetExceeded(
                        # untranslated: the agent reads it; it becomes the attempt's reason
                        f"run {run_id!r} has spent ${spent:.4f} on model calls, its whole "
                        f"budget of ${run_limit:.2f} (gateway.budgets.run_usd): no new model "
                        "calls are made; raise the budget in seatrial.yaml, or run fewer "
                        "cases or repeats"
                    )
            if project_limit is not None:
                spent = self._of(None).total
                if spent >= project_limit - _EPSILON_USD:
                    raise BudgetExceeded(
                        # untranslated: the agent reads it; it becomes the attempt's reason
                        f"the project has spent ${spent:.4f} on model calls, its whole budget "
                        f"of ${project_limit:.2f} (gateway.budgets.project_usd): no new model "
                        "calls are made; raise the budget in seatrial.yaml, or point --db at "
                        "a new store to start counting afresh"
                    )

    def add(self, run_id: str | None, cost_usd: float) -> None:
        """Count a finished call's cost; warn once when a limit's ``warn_at`` share is reached."""
        if cost_usd < 0:
            raise ValueError(f"a call cannot cost less than nothing (got {cost_usd})")
        warnings: list[str] = []
        with self._lock:
            if run_id is not None:
                run = self._of(run_id)
                run.since += cost_usd
                warning = self._crossed(run_id, run.total, self._config.run_usd)
                if warning:
                    warnings.append(
                        _(
                            "run {run_id!r} has spent {spent} on model calls, {share} of its "
                            "{limit} budget; new calls stop at the limit "
                            "(gateway.budgets.run_usd)"
                        ).format(run_id=run_id, **warning)
                    )
            project = self._of(None)
            project.since += cost_usd
            warning = self._crossed(None, project.total, self._config.project_usd)
            if warning:
                warnings.append(
                    _(
                        "the project has spent {spent} on model calls, {share} of its {limit} "
                        "budget; new calls stop at the limit (gateway.budgets.project_usd)"
                    ).format(**warning)
                )
        # Outside the lock: a callback may well log, print or check the budget itself.
        for text in warnings:
            self._warn(text)

    def _crossed(self, key: _Key, spent: float, limit: float | None) -> dict[str, str] | None:
        if (
            limit is None
            or key in self._warned
            or spent < limit * self._config.warn_at - _EPSILON_USD
        ):
            return None
        self._warned.add(key)
        return {
            "spent": f"${spent:.4f}",
            "share": f"{spent / limit:.0%}",
            "limit": f"${limit:.2f}",
        }

    def _of(self, key: _Key) -> _Spend:
        # The first read of a key is synchronous (one query per run, as a run starts);
        # later reads go through refresh(), off the event loop.
        spend = self._spend.get(key)
        if spend is None:
            stored = self._store.spend(key) if self._store is not None else 0.0
            spend = self._spend[key] = _Spend(stored, read_at=time.monotonic())
        return spend
