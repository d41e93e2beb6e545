"""``seatrial run --gateway``: each attempt's model calls land in its own stored trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.gateway import GatewayConfig, ModelConfig, Price
from seatrial.run import RunOptions, gateway_for_run, run_suite_async
from seatrial.store import Store
from seatrial.testing import AgentServer, FakeOpenAI, FakeReply
from seatrial.trace import Trace

AGENTS = Path(__file__).parent / "gateway_agents.py"
SEATRIAL = str(Path(sys.executable).parent / "seatrial")
KEY_ENV = "SEATRIAL_TEST_RUNNER_KEY"

SUITE = """
suite: through-the-gateway
cases:
  - id: capital
    input: Capital of France?
    repeats: 2
    assertions: [{type: contains, value: Paris}]
"""


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-runner")


def config_for(upstream: FakeOpenAI) -> GatewayConfig:
    main = ModelConfig(
        name="main",
        model="main-v1",
        base_url=upstream.base_url,
        api_key_env=KEY_ENV,
        price=Price(input_per_mtok=1.0, output_per_mtok=2.0),
    )
    return GatewayConfig(models={"main": main})


async def run_through_gateway(
    suite_path: Path, spec: str, store: Store, config: GatewayConfig
) -> str:
    adapter = resolve_agent(spec)
    try:
        async with gateway_for_run(config, store=store):
            outcome = await run_suite_async(
                load_suite(suite_path), adapter, store, RunOptions(concurrency=2)
            )
    finally:
        await adapter.aclose()
    return outcome.run_id


def model_span_under_agent(trace: Trace) -> Any:
    [call] = trace.model_calls()
    root = trace.agent_span()
    assert root is not None and call.span.parent_span_id == root.span_id
    return call


@pytest.mark.parametrize("function", ["async_model_agent", "sync_model_agent"])
async def test_a_python_agents_model_calls_land_in_each_attempts_stored_trace(
    tmp_path: Path, store: Store, function: str
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    reply = FakeReply("Paris.", input_tokens=40, output_tokens=2)
    async with FakeOpenAI(reply) as upstream:
        run_id = await run_through_gateway(
            suite, f"python:{AGENTS}:{function}", store, config_for(upstream)
        )
    records = store.attempts(run_id)
    assert [r.verdict for r in records] == ["PASS", "PASS"]
    for attempt in (1, 2):
        call = model_span_under_agent(store.attempt_trace(run_id, "capital", attempt))
        assert (call.model, call.input_tokens, call.output_tokens) == ("main-v1", 40, 2)
        assert call.cost_usd == pytest.approx((40 * 1.0 + 2 * 2.0) / 1e6)
        [row] = store.model_calls(run_id, case_id="capital", attempt=attempt)
        assert row.purpose == "agent" and row.cost_usd == pytest.approx(call.cost_usd)


def _http_agent(request: dict[str, Any]) -> str:
    base_url = request["context"]["gateway_base_url"]
    with openai.OpenAI(base_url=base_url, api_key="agent-side-key", max_retries=0) as client:
        answer = client.chat.completions.create(
            model="main", messages=[{"role": "user", "content": request["message"]}]
        )
    return answer.choices[0].message.content or ""


async def test_an_http_agent_gets_its_attempts_gateway_url_in_the_request_context(
    tmp_path: Path, store: Store
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    async with FakeOpenAI("Paris it is.") as upstream, AgentServer(_http_agent) as agent:
        run_id = await run_through_gateway(suite, agent.url, store, config_for(upstream))
        urls = {r.body["context"]["gateway_base_url"] for r in agent.requests}
    assert len(urls) == 2  # one base URL per attempt
    assert [r.verdict for r in store.attempts(run_id)] == ["PASS", "PASS"]
    for attempt in (1, 2):
        model_span_under_agent(store.attempt_trace(run_id, "capital", attempt))


def test_seatrial_run_with_gateway_reads_models_from_seatrial_yaml(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    with FakeOpenAI(FakeReply("Paris.", input_tokens=1000, output_tokens=10)) as upstream:
        (tmp_path / "seatrial.yaml").write_text(
            "models:\n"
            "  main:\n"
            "    model: main-v1\n"
            f"    base_url: {upstream.base_url}\n"
            f"    api_key_env: {KEY_ENV}\n"
            "    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n",
            encoding="utf-8",
        )
        done = subprocess.run(
            [
                SEATRIAL,
                "run",
                "suite.yaml",
                "--agent",
                f"python:{AGENTS}:async_model_agent",
                "--gateway",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "200"},
        )
        calls = len(upstream.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls == 2
    assert "model calls: $0.0020 (agent $0.0020)" in done.stdout
    assert "sk-test-runner" not in done.stdout + done.stderr
    report = subprocess.run(
        [SEATRIAL, "report", "latest", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    spend = json.loads(report.stdout)["spend_usd"]
    per_call = (1000 * 1.0 + 10 * 2.0) / 1_000_000  # the price written in seatrial.yaml
    assert spend == {"total": pytest.approx(2 * per_call), "agent": pytest.approx(2 * per_call)}


def test_gateway_with_several_workers_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "seatrial.yaml").write_text(
        "models:\n  main: {model: main-v1, base_url: 'http://127.0.0.1:9/v1'}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [SEATRIAL, "run", "suite.yaml", "--agent", "x", "--gateway", "--workers", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--workers 1" in done.stderr
    assert not (tmp_path / ".seatrial").exists()
