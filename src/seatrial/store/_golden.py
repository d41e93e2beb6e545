"""The store's golden sets (append-only, versioned) and generated cases waiting for approval."""

from __future__ import annotations


class GoldenMixin:
    """Store methods for golden sets and pending cases."""
