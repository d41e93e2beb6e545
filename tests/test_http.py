"""One ``Retry-After`` reader for every caller (RFC 9110 ``delay-seconds`` or ``HTTP-date``,
fractional seconds accepted), and its near-misses both ways."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from seatrial._http import retry_after_s

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        ("0", 0.0),
        ("1.5", 1.5),  # not in the RFC's grammar, but what the server asked for
        ("0.25", 0.25),
        (" 3 ", 3.0),
        ("120", 120.0),  # the parser does not cap: each caller keeps its own cap
    ],
)
def test_delay_seconds_are_read_whole_or_fractional(value, seconds):
    assert retry_after_s(value) == seconds


@pytest.mark.parametrize(
    "value",
    [None, "", "   ", "soon", "-1", "+2", "1e3", "nan", "inf", ".5", "5.", "1.5s", "1,5", "٣"],
)
def test_anything_else_gives_no_advice(value):
    # No advice: the caller falls back to its own backoff (a negative or NaN wait never
    # reaches a sleep).
    assert retry_after_s(value, now=NOW.timestamp()) is None


def test_an_http_date_is_read_against_the_clock():
    later = datetime(2026, 12, 1, 12, 0, 30, tzinfo=UTC)
    assert retry_after_s(format_datetime(later, usegmt=True), now=NOW.timestamp()) == 30.0


def test_an_http_date_already_past_asks_for_no_wait():
    earlier = datetime(2026, 12, 1, 11, 59, 0, tzinfo=UTC)
    assert retry_after_s(format_datetime(earlier, usegmt=True), now=NOW.timestamp()) == 0.0


@pytest.mark.parametrize(
    "value",
    ["Tue Dec  1 12:00:30 2026", "Tuesday, 01-Dec-26 12:00:30 GMT"],
    ids=["asctime", "rfc850"],
)
def test_the_obsolete_date_forms_are_gmt_whatever_the_machines_zone(value, monkeypatch):
    # asctime carries no zone; HTTP dates are always GMT, never the machine's local time.
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    import time

    time.tzset()
    try:
        assert retry_after_s(value, now=NOW.timestamp()) == 30.0
    finally:
        monkeypatch.undo()
        time.tzset()
