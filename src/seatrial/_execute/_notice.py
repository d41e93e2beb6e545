"""What a run says as it starts, and where its attempts run: the types the front door's
modules share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Backend = Literal["local", "celery"]
"""Where a run's attempts run: this machine (``local``) or Celery workers (``celery``)."""

NoticeLevel = Literal["info", "warning", "alarm"]
"""How loud a notice is: ``info`` (what was chosen), ``warning`` (something missing or
ignored), ``alarm`` (the judge's verdicts cannot be trusted)."""

OnNotice = Callable[[NoticeLevel, str], None]
"""Receives what a run says as it starts: the baseline chosen, the judge's gate, the
gateway's URL, a setting ignored."""


def quiet(level: NoticeLevel, text: str) -> None:
    """The default listener: a library call says nothing on its own."""
