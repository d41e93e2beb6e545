"""``seatrial mask --check``: show what masking would replace in a file."""

from __future__ import annotations
