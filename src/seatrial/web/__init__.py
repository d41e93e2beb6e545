"""The web dashboard: server-rendered pages and a JSON API over the store (``seatrial serve``).

It reads the store and never runs, evaluates or re-judges anything; the one thing it writes is
a human label on a review-queue item.
"""

from seatrial.web._app import LOOPBACK_HOSTS, TOKEN_ENV, create_app
from seatrial.web._security import MIN_TOKEN_LENGTH, check_token

__all__ = ["LOOPBACK_HOSTS", "MIN_TOKEN_LENGTH", "TOKEN_ENV", "check_token", "create_app"]
