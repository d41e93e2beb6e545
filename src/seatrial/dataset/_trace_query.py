"""How a person writes the filters of the production traces list, in the CLI and the browser.

Times are UTC: ``since`` and ``until`` take a day (``2026-07-01``; ``until`` includes that
day), a minute (``2026-07-01T09:30``) or a span back from now (``30m``, ``24h``, ``7d``).
``error`` is ``yes`` (only failed traces) or ``no`` (only traces without an error).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass

from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.store import TraceQuery

DAY_S = 86_400.0
_AGO = re.compile(r"^(\d+)\s*([mhd])$")
_UNIT_S = {"m": 60.0, "h": 3_600.0, "d": DAY_S}
_YES = frozenset({"yes", "true", "1", "error", "failed"})
_NO = frozenset({"no", "false", "0", "ok"})


def _moment(name: str, text: str, *, end_of_day: bool) -> float:
    """Unix seconds for a day, a minute or a span back from now; InputError otherwise."""
    text = text.strip()
    ago = _AGO.match(text)
    if ago:
        return time.time() - int(ago.group(1)) * _UNIT_S[ago.group(2)]
    day = _day(text)
    if day is not None:
        start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()
        return start + DAY_S if end_of_day else start
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            _(
                "{name}={text} is not a time: write a day (2026-07-01), a minute "
                "(2026-07-01T09:30, UTC) or a span back from now (30m, 24h, 7d)"
            ).format(name=name, text=repr(text))
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _day(text: str) -> dt.date | None:
    """The day ``text`` names (``2026-07-01``), or None when it names no day."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _error(text: str) -> bool | None:
    word = text.strip().casefold()
    if not word or word == "any":
        return None
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise InputError(
        _("error={text}: write yes (only failed traces), no, or leave it empty").format(
            text=repr(text)
        )
    )


@dataclass(frozen=True)
class TraceFilter:
    """The list's filters as written (query parameters, CLI options); empty means unset."""

    since: str = ""
    until: str = ""
    service: str = ""
    tool: str = ""
    error: str = ""
    failed_check: str = ""

    def query(self, *, limit: int, offset: int = 0) -> TraceQuery:
        """The store's query; :class:`InputError` naming the filter that does not read."""
        return TraceQuery(
            since=_moment("since", self.since, end_of_day=False) if self.since else None,
            until=_moment("until", self.until, end_of_day=True) if self.until else None,
            service=self.service.strip() or None,
            tool=self.tool.strip() or None,
            error=_error(self.error),
            failed_check=self.failed_check.strip() or None,
            limit=limit,
            offset=offset,
        )

    def params(self) -> dict[str, str]:
        """The filters that are set, as query parameters (for paging links)."""
        named = {
            "since": self.since,
            "until": self.until,
            "service": self.service,
            "tool": self.tool,
            "error": self.error,
            "failed_check": self.failed_check,
        }
        return {name: value for name, value in named.items() if value}
