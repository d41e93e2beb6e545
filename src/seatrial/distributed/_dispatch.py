"""The coordinator's side of ``seatrial run --backend celery``: send one task per attempt,
follow the run from the store, and send again what went missing.

The coordinator never hears from a worker directly: what counts is what is stored. It polls
the store for the run's attempts and reports each new one to the progress display. When
nothing new was stored for longer than the broker's visibility timeout (plus a margin), every
attempt still missing is sent again: a worker that died took its messages with it, and the
broker gives them back only after that timeout; a message dropped by a broker restart never
comes back at all. Sending twice is safe: the store keeps one attempt per (run, case,
attempt), and a worker runs nothing for a run that stopped after the task was sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from seatrial.case import Case
from seatrial.distributed._app import RUN_ATTEMPT_TASK, BrokerSettings, celery_app
from seatrial.errors import ConfigError, InputError
from seatrial.record import AttemptRecord
from seatrial.store import Store, attempt_verdicts

POLL_S = 0.5
"""How often the coordinator reads the store for newly stored attempts."""
RESEND_MARGIN_S = 10.0
"""Added to the visibility timeout before missing attempts are sent again."""
BROKER_CHECK_TIMEOUT_S = 5.0


@dataclass
class CeleryDispatch:
    """Runs a run's attempts on Celery workers; a :class:`seatrial.run.Dispatch`."""

    store: Store
    """The coordinator's store: the workers must write to the same database."""
    broker: BrokerSettings
    """The broker and queue the tasks go to."""
    on_resend: Callable[[int], None] | None = None
    """Told how many missing attempts were sent again after a stall."""
    resent: int = 0
    """Attempts sent again so far (after stalls)."""

    @classmethod
    def open(
        cls, store: Store, timeout_s: float | None, queue: str | None = None
    ) -> CeleryDispatch:
        """Check the broker settings against the run's per-attempt timeout and reach the
        broker, before anything is stored.

        Raises:
            ConfigError: no broker URL, Celery missing, or the broker unreachable.
            InputError: the per-attempt timeout is not shorter than the visibility timeout.
        """
        broker = BrokerSettings.from_env(queue)
        if timeout_s is None or timeout_s >= broker.visibility_timeout_s:
            shown = "no timeout" if timeout_s is None else f"--timeout {timeout_s:g}"
            raise InputError(
                f"{shown} is not shorter than the broker's visibility timeout "
                f"({broker.visibility_timeout_s:g} s): an attempt still running would be "
                "delivered again; give a shorter --timeout or raise SEATRIAL_VISIBILITY_TIMEOUT"
            )
        app = celery_app(broker)
        try:
            with app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=0, timeout=BROKER_CHECK_TIMEOUT_S)
        except Exception as exc:  # kombu raises the transport's own errors
            raise ConfigError(
                f"cannot reach the broker at {broker.shown_url} ({type(exc).__name__}: {exc}); "
                "start it or fix SEATRIAL_BROKER_URL"
            ) from exc
        return cls(store=store, broker=broker)

    def _send(self, run_id: str, items: list[tuple[str, int]]) -> None:
        app = celery_app(self.broker)
        sent_at = time.time()
        with app.producer_or_acquire() as producer:
            for case_id, attempt in items:
                app.send_task(
                    RUN_ATTEMPT_TASK,
                    args=(run_id, case_id, attempt, sent_at),
                    queue=self.broker.queue,
                    producer=producer,
                )

    async def __call__(
        self,
        run_id: str,
        plan: list[tuple[Case, int]],
        on_record: Callable[[AttemptRecord], None],
    ) -> None:
        """Send every attempt of ``plan`` and return once each one is stored."""
        wanted = {(case.id, attempt) for case, attempt in plan}
        seen = set(await asyncio.to_thread(attempt_verdicts, self.store, run_id))
        await asyncio.to_thread(self._send, run_id, sorted(wanted - seen, key=_plan_order(plan)))
        stall_s = self.broker.visibility_timeout_s + RESEND_MARGIN_S
        last_progress = time.monotonic()
        while not wanted <= seen:
            await asyncio.sleep(POLL_S)
            stored = await asyncio.to_thread(attempt_verdicts, self.store, run_id)
            fresh = [key for key in stored if key not in seen and key in wanted]
            for case_id, attempt in fresh:
                verdict, failure_type = stored[(case_id, attempt)]
                seen.add((case_id, attempt))
                on_record(
                    AttemptRecord(
                        run_id=run_id,
                        case_id=case_id,
                        attempt=attempt,
                        verdict=verdict,
                        failure_type=failure_type,
                    )
                )
            now = time.monotonic()
            if fresh:
                last_progress = now
            elif now - last_progress > stall_s:
                missing = sorted(wanted - seen, key=_plan_order(plan))
                await asyncio.to_thread(self._send, run_id, missing)
                self.resent += len(missing)
                if self.on_resend is not None:
                    self.on_resend(len(missing))
                last_progress = now


def _plan_order(plan: list[tuple[Case, int]]) -> Callable[[tuple[str, int]], int]:
    order = {(case.id, attempt): index for index, (case, attempt) in enumerate(plan)}
    return lambda key: order.get(key, len(order))
