"""A temporary project for the snapshot and replay tests: the order agent of
``replay_agent.py``, a suite, and a ``seatrial.yaml`` whose model is a FakeOpenAI."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.config import load_config
from seatrial.run import RunOptions, gateway_for_run, run_suite_async
from seatrial.store import Store
from seatrial.testing import FakeReply, FakeToolCall

AGENT = Path(__file__).parent / "replay_agent.py"
KEY_ENV = "SEATRIAL_TEST_REPLAY_KEY"
PINNED = "main-v1"
"""The model id the fake upstream reports answering with."""

SUITE = """
suite: orders
cases:
  - id: where-is-my-order
    input: Where is order A1?
    assertions:
      - {type: tool_called, expected: order_status}
      - {type: contains, value: shipped}
"""


def order_model(body: dict[str, Any]) -> FakeReply:
    """The fake model: ask for order_status, then answer from the tool's result."""
    if body["messages"][-1]["role"] == "tool":
        return FakeReply("Order A1 is shipped.", model=PINNED)
    return FakeReply(tool_calls=[FakeToolCall("order_status", {"order_id": "A1"})], model=PINNED)


def write_project(root: Path, upstream_url: str, cassette: str = "record") -> Path:
    """agent.py, suite.yaml and seatrial.yaml (agent ``orders``, model ``main``) in ``root``."""
    shutil.copy(AGENT, root / "agent.py")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (root / "seatrial.yaml").write_text(
        "agents:\n"
        "  orders: python:agent.py:agent\n"
        "models:\n"
        "  main:\n"
        f"    model: {PINNED}\n"
        f"    base_url: {upstream_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        "gateway:\n"
        f"  cassette: {{mode: {cassette}}}\n",
        encoding="utf-8",
    )
    return root / "suite.yaml"


def set_prompt(root: Path, prompt: str) -> None:
    """Change the PROMPT constant of the project's agent.py."""
    path = root / "agent.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    edited = [f"PROMPT = {prompt!r}" if line.startswith("PROMPT = ") else line for line in lines]
    path.write_text("\n".join(edited) + "\n", encoding="utf-8")


async def record_run(root: Path, store: Store, agent: str = "orders") -> str:
    """Run the project's suite through its gateway (recording its cassette); the run id."""
    config = load_config(root)
    adapter = resolve_agent(agent, agents=config.agents, base_dir=root)
    try:
        await adapter.check()
        async with gateway_for_run(config.gateway_config(), store=store, project_dir=root):
            outcome = await run_suite_async(
                load_suite(root / "suite.yaml"), adapter, store, RunOptions(concurrency=1)
            )
    finally:
        await adapter.aclose()
    return outcome.run_id
