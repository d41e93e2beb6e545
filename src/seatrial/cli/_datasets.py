"""``seatrial datasets``: golden sets, their versions, import and export."""

from __future__ import annotations
