"""HTTP protocol details that more than one package reads; each has one parser here.

``Retry-After`` (RFC 9110, section 10.2.3) is either ``delay-seconds`` (digits) or an
``HTTP-date``. Seatrial also accepts fractional seconds (``"1.5"``), as many clients and
servers use them; the RFC's grammar has none, but an answer that asks for 1.5 s means 1.5 s,
not "no advice". Anything else (a sign, an exponent, ``nan``, a unit, a bad date) is no
advice: the caller falls back to its own backoff. How long a caller is willing to wait is the
caller's own rule (its cap); this module only reads the header.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import time

_DELAY_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")
"""``delay-seconds``, with an optional fraction; ASCII digits only."""


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header value asks to wait, or None when it gives no advice.

    Args:
        value: The header's value as received (surrounding spaces are ignored).
        now: The current time as a Unix timestamp, for an ``HTTP-date``; the clock's when
            None.

    Returns:
        The seconds asked for (0.0 for a date already past), or None for an absent, empty or
        unreadable value. An ``HTTP-date`` without a zone is read as GMT, as RFC 9110
        requires of every HTTP date.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    current = time.time() if now is None else now
    return max(0.0, moment.timestamp() - current)
