"""The Celery app both sides use: its broker, its queue, and the settings that make a task
safe to run twice.

Celery is an optional dependency (``pip install "seatrial[celery]"``): it is imported here, when
an app is made, never when Seatrial starts.

Delivery guarantees come from the broker and four settings, all set in :func:`celery_app`:

- ``task_acks_late``: a task is acknowledged after its attempt is stored, not when a worker
  takes it, so a worker that dies mid-attempt leaves the message unacknowledged;
- ``task_reject_on_worker_lost``: a task whose process died is re-queued rather than failed;
- ``worker_prefetch_multiplier = 1``: a worker holds no more messages than attempts in flight;
- the Redis transport's ``visibility_timeout`` (``SEATRIAL_VISIBILITY_TIMEOUT``): a message
  taken but not acknowledged within it goes back to the queue. It must be longer than the
  longest attempt, or a slow attempt runs twice (harmless, but paid for).

None of them makes a task run once; the store's (run, case, attempt) identity does. Nor does
any of them notice a dead worker before the visibility timeout: the attempt leases of
:mod:`seatrial.distributed._lease` do, through the ``task_received`` signal connected here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from celery import Celery

BROKER_URL_ENV = "SEATRIAL_BROKER_URL"
"""The broker's URL, e.g. ``redis://127.0.0.1:6379/0``; required by both sides."""
QUEUE_ENV = "SEATRIAL_QUEUE"
"""The queue attempts are sent to and workers read (default ``seatrial``)."""
VISIBILITY_TIMEOUT_ENV = "SEATRIAL_VISIBILITY_TIMEOUT"
"""Seconds before an unacknowledged message is delivered again (default 3600)."""
DEFAULT_QUEUE = "seatrial"
DEFAULT_VISIBILITY_TIMEOUT_S = 3600.0
RUN_ATTEMPT_TASK = "seatrial.run_attempt"
"""The task's name; its arguments are ``(run_id, case_id, attempt, sent_at)``."""


@dataclass(frozen=True)
class BrokerSettings:
    """Where attempts travel: the broker, the queue, and the visibility timeout."""

    url: str
    """The broker URL (it may hold a password: never print it, see :attr:`shown_url`)."""
    queue: str = DEFAULT_QUEUE
    """The queue name."""
    visibility_timeout_s: float = DEFAULT_VISIBILITY_TIMEOUT_S
    """Seconds before an unacknowledged message is delivered again."""

    @property
    def shown_url(self) -> str:
        """The URL with its password masked, for messages."""
        from kombu.utils.url import maybe_sanitize_url

        return str(maybe_sanitize_url(self.url))

    @classmethod
    def from_env(cls, queue: str | None = None) -> BrokerSettings:
        """The settings from ``SEATRIAL_BROKER_URL``, ``SEATRIAL_QUEUE`` and
        ``SEATRIAL_VISIBILITY_TIMEOUT``; ``queue`` wins over the environment."""
        url = os.environ.get(BROKER_URL_ENV, "").strip()
        if not url:
            raise ConfigError(
                _(
                    "{env} is not set: the Celery backend needs a broker, e.g. `{example}` "
                    "(see docs/scale.md)"
                ).format(
                    env=BROKER_URL_ENV, example=f"export {BROKER_URL_ENV}=redis://127.0.0.1:6379/0"
                )
            )
        raw = os.environ.get(VISIBILITY_TIMEOUT_ENV, "").strip()
        try:
            visibility = float(raw) if raw else DEFAULT_VISIBILITY_TIMEOUT_S
        except ValueError:
            visibility = -1.0
        if visibility <= 0:
            raise ConfigError(
                _(
                    "{setting} is not a positive number of seconds; set it longer than the "
                    "longest attempt (default 3600)"
                ).format(setting=f"{VISIBILITY_TIMEOUT_ENV}={raw!r}")
            )
        return cls(
            url=url,
            queue=queue or os.environ.get(QUEUE_ENV, "").strip() or DEFAULT_QUEUE,
            visibility_timeout_s=visibility,
        )


def require_celery() -> None:
    """Raise a clear error when Celery is not installed."""
    try:
        import celery  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            _("the Celery backend needs Celery: {command}").format(
                command='pip install "seatrial[celery]"'
            )
        ) from exc


def celery_app(settings: BrokerSettings | None = None) -> Celery:
    """The configured Celery app with Seatrial's task registered (one per settings)."""
    require_celery()
    return _app(settings or BrokerSettings.from_env())


@lru_cache(maxsize=8)
def _app(settings: BrokerSettings) -> Celery:
    from celery import Celery, signals

    from seatrial.distributed._task import lease_on_receipt, run_attempt_task

    app = Celery("seatrial", broker=settings.url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=settings.queue,
        task_serializer="json",
        accept_content=["json"],
        # Progress is read from the store: no result backend, no results kept.
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": settings.visibility_timeout_s},
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
    )
    app.task(name=RUN_ATTEMPT_TASK, bind=True, max_retries=None)(run_attempt_task)
    # Celery has no per-task heartbeat; a worker's leases are ours (distributed/_lease.py).
    signals.task_received.connect(lease_on_receipt, weak=False, dispatch_uid="seatrial-lease")
    return app
