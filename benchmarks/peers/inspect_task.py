"""Inspect AI's side of ``benchmarks/peers.py``: a task whose solver calls the agent over HTTP.

Run with ``inspect eval inspect_task.py --model none --max-samples N`` in Inspect's own
virtualenv. The agent's URL and the number of cases come from ``PEERS_AGENT_URL`` and
``PEERS_CASES``. Two scorers, ``contains`` and ``regex``, grade each answer.
"""

from __future__ import annotations

import os
import re

import httpx
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver

PATTERN = re.compile(r"Order A\d+ is (shipped|delivered)")


@solver
def call_agent():  # type: ignore[no-untyped-def]
    """POST the sample's input to the agent; its answer becomes the completion."""
    url = os.environ["PEERS_AGENT_URL"]
    clients: list[httpx.AsyncClient] = []

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not clients:
            clients.append(httpx.AsyncClient(timeout=60))
        response = await clients[0].post(
            url,
            json={
                "session_id": str(state.sample_id),
                "message": state.input_text,
                "metadata": {"case_id": str(state.sample_id)},
            },
        )
        response.raise_for_status()
        state.output.completion = response.json()["response"]
        return state

    return solve


@scorer(metrics=[accuracy()])
def contains(text: str = "shipped"):  # type: ignore[no-untyped-def]
    """CORRECT when the completion contains ``text``."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=CORRECT if text in state.output.completion else INCORRECT)

    return score


@scorer(metrics=[accuracy()])
def regex():  # type: ignore[no-untyped-def]
    """CORRECT when the completion matches ``PATTERN``."""

    async def score(state: TaskState, target: Target) -> Score:
        found = PATTERN.search(state.output.completion)
        return Score(value=CORRECT if found else INCORRECT)

    return score


@task
def peers() -> Task:
    """The benchmark's cases, answered by the agent, graded by contains and regex."""
    cases = int(os.environ.get("PEERS_CASES", "1000"))
    return Task(
        dataset=[
            Sample(id=f"order-{n:05d}", input=f"Where is order {n:05d}?") for n in range(cases)
        ],
        solver=call_agent(),
        scorer=[contains(), regex()],
    )
