"""``seatrial failures`` and ``seatrial report daily``."""

from __future__ import annotations
