"""Times written by other tools, as nanoseconds since the epoch.

Exports spell a moment in many ways: ISO 8601 strings with or without a zone and with up to
nine fractional digits (Langfuse, Phoenix's REST API), or epoch numbers in seconds,
milliseconds (pandas' ``to_json``), microseconds or nanoseconds. A time without a zone is
taken as UTC, the zone every one of those tools writes.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

_FRACTION = re.compile(r"\.(\d+)")

# Below these magnitudes an epoch number is in seconds, milliseconds, microseconds.
_MILLIS_FROM = 10**11
_MICROS_FROM = 10**14
_NANOS_FROM = 10**17


def to_unix_nanos(value: Any) -> int | None:
    """``value`` as nanoseconds since the epoch; None for a missing or unreadable time."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _from_number(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.lstrip("-").replace(".", "", 1).isdigit():
        return _from_number(float(text) if "." in text else int(text))
    return _from_iso(text)


def _from_number(number: float) -> int:
    magnitude = abs(number)
    if magnitude >= _NANOS_FROM:
        return int(number)
    if magnitude >= _MICROS_FROM:
        return int(number * 1_000)
    if magnitude >= _MILLIS_FROM:
        return int(number * 1_000_000)
    return int(number * 1_000_000_000)


def _from_iso(text: str) -> int | None:
    # datetime keeps microseconds: read the fraction separately so nanoseconds survive.
    extra_nanos = 0
    match = _FRACTION.search(text)
    if match:
        digits = match.group(1)
        extra_nanos = int(digits[6:9].ljust(3, "0")) if len(digits) > 6 else 0
        text = text[: match.start()] + "." + digits[:6] + text[match.end() :]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros * 1_000 + extra_nanos
