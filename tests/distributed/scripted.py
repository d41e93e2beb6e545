"""A scripted agent for the distributed tests: the same answer for a case every time.

``case-N``: N divisible by 7 raises (ERROR, ``agent_error``), else divisible by 3 answers
``bad`` (FAIL on ``contains: ok``), else ``ok`` (PASS). ``$SEATRIAL_TEST_SLEEP`` seconds of
waiting per answer keep a run in flight long enough to kill a worker in the middle.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from seatrial.agent import Session


async def answer(message: str, session: Session) -> str:
    """Answer ``case-N`` as scripted above."""
    await asyncio.sleep(float(os.environ.get("SEATRIAL_TEST_SLEEP", "0")))
    number = int(message.removeprefix("case-"))
    if number % 7 == 0:
        raise RuntimeError("scripted crash")
    return "ok" if number % 3 else "bad"


def counted_reply(request: dict[str, Any]) -> str:
    """The same script for an HTTP agent (``seatrial.testing.AgentServer``), whose requests
    the test counts: ``case-N`` answers ``bad`` when N is divisible by 3, else ``ok``."""
    number = int(str(request.get("message", "")).removeprefix("case-"))
    return "ok" if number % 3 else "bad"


def suite_text(cases: int) -> str:
    """A suite of ``cases`` cases ``c001`` ... asking for ``ok``, gated at 90% passing."""
    lines = ["suite: scripted", "gate:", "  min_pass_rate: 0.9", "cases:"]
    for number in range(1, cases + 1):
        lines += [
            f"  - id: c{number:03d}",
            f'    input: "case-{number}"',
            "    assertions:",
            "      - type: contains",
            "        value: ok",
        ]
    return "\n".join(lines) + "\n"
