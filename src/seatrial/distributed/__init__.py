"""Running a suite's attempts on Celery workers: ``seatrial run --backend celery`` and
``seatrial worker``."""

__all__: list[str] = []
