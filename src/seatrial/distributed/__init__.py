"""Running a suite's attempts on Celery workers: ``seatrial run --backend celery`` and
``seatrial worker``.

The coordinator (:class:`CeleryDispatch`, behind ``execute_suite_async(backend="celery")``)
stores the run, sends one ``seatrial.run_attempt`` task per attempt and follows the run from
the store; workers (:func:`start_worker`) build each run's agent, judge and gateway once
(:func:`open_run_runtime`), run the attempts and store them before acknowledging. See
docs/scale.md for what is guaranteed when a worker, the broker or the coordinator dies.
"""

from seatrial.distributed._app import (
    BROKER_URL_ENV,
    DEFAULT_QUEUE,
    QUEUE_ENV,
    RUN_ATTEMPT_TASK,
    VISIBILITY_TIMEOUT_ENV,
    BrokerSettings,
    celery_app,
    require_celery,
)
from seatrial.distributed._dispatch import CeleryDispatch
from seatrial.distributed._launch import LOG_LEVELS, start_worker
from seatrial.distributed._runtime import RunRuntime, open_run_runtime
from seatrial.distributed._task import PROJECT_DIR_ENV

__all__ = [
    "BROKER_URL_ENV",
    "DEFAULT_QUEUE",
    "LOG_LEVELS",
    "PROJECT_DIR_ENV",
    "QUEUE_ENV",
    "RUN_ATTEMPT_TASK",
    "VISIBILITY_TIMEOUT_ENV",
    "BrokerSettings",
    "CeleryDispatch",
    "RunRuntime",
    "celery_app",
    "open_run_runtime",
    "require_celery",
    "start_worker",
]
