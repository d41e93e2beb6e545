"""Spending limits per run and per project: a warning at ``warn_at``, new calls stopped at 100%.

What was spent before this process started comes from the store's ledger, read once per run
(so a resumed run counts what it spent before it was interrupted) and once for the project;
calls priced since then are added here as they finish. Another process's spend is seen as of
this process's first call of that run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from seatrial.errors import BudgetExceeded
from seatrial.gateway._config import BudgetConfig
from seatrial.store import Store

logger = logging.getLogger("seatrial.gateway")

# Sums of float prices drift (0.7 + 0.2 + 0.1 < 1.0): a limit counts as reached within this.
_EPSILON_USD = 1e-9


class Budget:
    """Checks calls against ``gateway.budgets`` and counts what they cost.

    ``check`` before a call raises :class:`~seatrial.errors.BudgetExceeded` once a limit is
    spent; ``add`` after it counts the cost and warns once per limit when ``warn_at`` of it
    is reached. Safe to share between threads.
    """

    def __init__(
        self,
        config: BudgetConfig,
        store: Store | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        """Enforce ``config``; ``store`` supplies earlier spend; ``warn`` receives warnings.

        Warnings go to the ``seatrial.gateway`` logger when no ``warn`` is given.
        """
        self._config = config
        self._store = store
        self._warn = warn if warn is not None else logger.warning
        self._lock = threading.Lock()
        self._runs: dict[str, float] = {}
        self._project: float | None = None
        self._warned: set[str | None] = set()

    def spent(self, run_id: str | None = None) -> float:
        """US dollars spent so far: by the run, or by the whole project when ``run_id`` is None."""
        with self._lock:
            return self._project_spent() if run_id is None else self._run_spent(run_id)

    def check(self, run_id: str | None) -> None:
        """Refuse a new call when the run's or the project's budget is spent."""
        run_limit, project_limit = self._config.run_usd, self._config.project_usd
        with self._lock:
            if run_limit is not None and run_id is not None:
                spent = self._run_spent(run_id)
                if spent >= run_limit - _EPSILON_USD:
                    raise BudgetExceeded(
                        f"run {run_id!r} has spent ${spent:.4f} on model calls, its whole "
                        f"budget of ${run_limit:.2f} (gateway.budgets.run_usd): no new model "
                        "calls are made; raise the budget in seatrial.yaml, or run fewer "
                        "cases or repeats"
                    )
            if project_limit is not None:
                spent = self._project_spent()
                if spent >= project_limit - _EPSILON_USD:
                    raise BudgetExceeded(
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
                self._runs[run_id] = self._run_spent(run_id) + cost_usd
                warning = self._crossed(run_id, self._runs[run_id], self._config.run_usd)
                if warning:
                    warnings.append(f"run {run_id!r} {warning} (gateway.budgets.run_usd)")
            self._project = self._project_spent() + cost_usd
            warning = self._crossed(None, self._project, self._config.project_usd)
            if warning:
                warnings.append(f"the project {warning} (gateway.budgets.project_usd)")
        # Outside the lock: a callback may well log, print or check the budget itself.
        for text in warnings:
            self._warn(text)

    def _crossed(self, key: str | None, spent: float, limit: float | None) -> str | None:
        if (
            limit is None
            or key in self._warned
            or spent < limit * self._config.warn_at - _EPSILON_USD
        ):
            return None
        self._warned.add(key)
        return (
            f"has spent ${spent:.4f} on model calls, {spent / limit:.0%} of its "
            f"${limit:.2f} budget; new calls stop at the limit"
        )

    def _run_spent(self, run_id: str) -> float:
        if run_id not in self._runs:
            self._runs[run_id] = self._store.spend(run_id) if self._store is not None else 0.0
        return self._runs[run_id]

    def _project_spent(self) -> float:
        if self._project is None:
            self._project = self._store.spend() if self._store is not None else 0.0
        return self._project
