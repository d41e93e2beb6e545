"""Names for failure clusters, asked of a model through the gateway (optional).

Kept apart from :mod:`seatrial.dataset._failures` so that reports and the dashboard, which
cluster failures, never import the gateway (the import-linter contract "reports ... never call
a model"). The deterministic label stays; the name is shown beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from seatrial.dataset._failures import FailureCluster, with_names
from seatrial.gateway import ChatRequest, Gateway, Message

NAMING_EXAMPLES = 3
"""Members shown to the model per cluster: the example first, then the next ones."""
NAME_LIMIT = 60
"""Longest name kept, in characters; a longer answer is cut at a word."""

_PROMPT = """You name groups of failed attempts of an AI agent under test, for a QA report.
Give the group below a short name (at most six words) saying what went wrong, in the language
the attempts are written in. Answer with the name only.

Failure type: {failure_type}
Label: {label}
Attempts ({count} in all):
{examples}"""


async def name_clusters(
    clusters: Sequence[FailureCluster], gateway: Gateway, model: str
) -> list[FailureCluster]:
    """The clusters, each with a short name from ``model`` (purpose ``generation``).

    Async, like the judge: a gateway's clients belong to the event loop that uses them, so the
    caller runs this in the loop that later closes the gateway. Calls run concurrently; a
    gateway error (unknown model, budget, provider down) is raised as the gateway raises it.
    """
    names = await asyncio.gather(*(_name(cluster, gateway, model) for cluster in clusters))
    return with_names(clusters, names)


async def _name(cluster: FailureCluster, gateway: Gateway, model: str) -> str | None:
    shown = [cluster.example] + [m for m in cluster.members if m is not cluster.example]
    examples = "\n".join(
        f"- reason: {member.reason[:300]}\n  reply: {member.reply[:200]}"
        for member in shown[:NAMING_EXAMPLES]
    )
    prompt = _PROMPT.format(
        failure_type=cluster.failure_type,
        label=cluster.label,
        count=cluster.count,
        examples=examples,
    )
    response = await gateway.chat(
        ChatRequest(
            model=model,
            messages=[Message(role="user", content=prompt)],
            temperature=0,
            max_tokens=40,
            purpose="generation",
        )
    )
    content = response.message.content
    return _clean(content if isinstance(content, str) else "")


def _clean(answer: str) -> str | None:
    """The first non-empty line, without quotes or a trailing full stop; None when empty."""
    line = next((line.strip() for line in answer.splitlines() if line.strip()), "")
    line = line.strip("\"'`*「」“” ").rstrip(".。")
    if len(line) > NAME_LIMIT:
        line = line[:NAME_LIMIT].rsplit(" ", 1)[0]
    return line or None
