"""DeepEval's side of ``benchmarks/peers.py``: call the agent, then ``deepeval.evaluate``.

Runs in DeepEval's own virtualenv. The cases are sent to the agent concurrently (asyncio,
``CONCURRENCY`` in flight, httpx as DeepEval's users do), and the answers are evaluated by
``deepeval.evaluate`` in its async mode with two custom metrics, ``contains`` and ``regex``.
``--write-cache`` turns DeepEval's result cache writes on (its default); off, it writes none.
Exits 1 unless every case passed.

    python deepeval_run.py URL CASES CONCURRENCY [--write-cache]
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import httpx
from deepeval import evaluate
from deepeval.evaluate import AsyncConfig, CacheConfig, DisplayConfig
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase


class Contains(BaseMetric):
    """1.0 when the answer contains ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.threshold = 1.0
        self.async_mode = True

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        self.score = float(self.text in (test_case.actual_output or ""))
        self.success = self.score >= self.threshold
        return self.score

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        return self.measure(test_case)

    def is_successful(self) -> bool:
        return bool(self.success)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return "Contains"


class Regex(BaseMetric):
    """1.0 when the answer matches ``pattern``."""

    def __init__(self, pattern: str) -> None:
        self.pattern = re.compile(pattern)
        self.threshold = 1.0
        self.async_mode = True

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        self.score = float(self.pattern.search(test_case.actual_output or "") is not None)
        self.success = self.score >= self.threshold
        return self.score

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        return self.measure(test_case)

    def is_successful(self) -> bool:
        return bool(self.success)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return "Regex"


async def answers(url: str, messages: list[str], concurrency: int) -> list[str]:
    """The agent's answer to each message, ``concurrency`` in flight."""
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=60) as client:

        async def ask(number: int, message: str) -> str:
            async with gate:
                response = await client.post(
                    url,
                    json={
                        "session_id": f"s{number}",
                        "message": message,
                        "metadata": {"case_id": f"order-{number:05d}"},
                    },
                )
                response.raise_for_status()
                return str(response.json()["response"])

        return await asyncio.gather(*(ask(n, m) for n, m in enumerate(messages)))


def main() -> None:
    """Call the agent for every case, evaluate, exit 1 unless every case passed."""
    url, cases, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    write_cache = "--write-cache" in sys.argv[4:]
    messages = [f"Where is order {n:05d}?" for n in range(cases)]
    outputs = asyncio.run(answers(url, messages, concurrency))
    test_cases = [
        LLMTestCase(input=message, actual_output=output)
        for message, output in zip(messages, outputs, strict=True)
    ]
    result = evaluate(
        test_cases,
        metrics=[Contains("shipped"), Regex(r"Order A\d+ is (shipped|delivered)")],
        async_config=AsyncConfig(run_async=True, max_concurrent=concurrency),
        cache_config=CacheConfig(write_cache=write_cache, use_cache=False),
        display_config=DisplayConfig(show_indicator=False, print_results=False),
    )
    passed = sum(1 for test in result.test_results if test.success)
    print(f"deepeval: {passed} of {cases} passed")
    sys.exit(0 if passed == cases else 1)


if __name__ == "__main__":
    main()
