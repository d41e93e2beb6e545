"""Text from the store in a Markdown report: the one escaper for every Markdown renderer.

An agent's reply, a failure reason that quotes it, a span's arguments: all are untrusted
input, and Markdown renderers pass raw HTML through (CommonMark does; GitHub then sanitises, a
wiki or an IDE preview may not). Written as entities, ``<script>`` and ``<img onerror=...>``
stay text wherever summary.md, the daily report or a trace diff is rendered.
"""

from __future__ import annotations

import html


def markdown_text(text: str) -> str:
    """``text`` for one line or one table cell of a Markdown report, inert.

    One line (whitespace runs become one space); ``&``, ``<`` and ``>`` written as entities,
    so no renderer reads a tag or an entity in it; ``|`` escaped, so a table keeps its cells;
    ``![`` escaped, so an agent's image link is not fetched. Everything else, Chinese
    included, is kept as written.
    """
    text = html.escape(" ".join(text.split()), quote=False)
    return text.replace("|", "\\|").replace("![", "!\\[")
