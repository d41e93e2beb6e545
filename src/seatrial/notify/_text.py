"""A notification's Markdown in each platform's dialect, cut to the platform's size limit."""

from __future__ import annotations

import re
from typing import Literal

from seatrial.i18n import gettext as _

Measure = Literal["bytes", "chars"]

_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def size(text: str, measure: Measure) -> int:
    """Length in UTF-8 bytes or in characters, as the platform counts it."""
    return len(text.encode("utf-8")) if measure == "bytes" else len(text)


def cut(text: str, limit: int, measure: Measure = "chars", link: str | None = None) -> str:
    """``text`` within ``limit``, cut at a line break where one is near, with a note (in the
    reader's language) saying how much was left out, and where to read all of it when there
    is a link."""
    if size(text, measure) <= limit:
        return text
    for _attempt in range(3):  # the note's own length depends on the count it states
        kept = _prefix(text, max(limit - 120, 0), measure)
        if "\n" in kept[len(kept) // 2 :]:
            kept = kept[: kept.rindex("\n")]
        left = len(text) - len(kept)
        said = (
            _("... cut: {count} more characters (the link has everything)")
            if link
            else _("... cut: {count} more characters")
        )
        note = "\n\n" + said.format(count=left)
        if size(kept + note, measure) <= limit:
            return kept + note
        limit -= 40
    return _prefix(text, limit, measure)


def _prefix(text: str, limit: int, measure: Measure) -> str:
    if measure == "chars":
        return text[:limit]
    encoded = text.encode("utf-8")[:limit]
    return encoded.decode("utf-8", errors="ignore")  # never half a character


def slack_mrkdwn(text: str) -> str:
    """Markdown to Slack's mrkdwn: ``&<>`` escaped, ``**bold**`` as ``*bold*``, links as
    ``<url|text>``."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = _BOLD.sub(r"*\1*", escaped)
    return _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", escaped)


def hard_breaks(text: str) -> str:
    """Line breaks that Markdown renderers keep (two spaces before each newline), for
    DingTalk, whose Markdown joins single lines otherwise."""
    return "\n".join(line.rstrip() + "  " if line.strip() else "" for line in text.split("\n"))
