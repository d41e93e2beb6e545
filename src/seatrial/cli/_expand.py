"""``seatrial cases expand`` and the approval queue of generated cases."""

from __future__ import annotations
