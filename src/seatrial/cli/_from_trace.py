"""``seatrial cases from-trace``: a stored production trace becomes a case."""

from __future__ import annotations
