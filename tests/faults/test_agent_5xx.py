"""The agent answers 5xx for a while: 502, 503 (with ``Retry-After``), 504 and connections
closed without an answer. Each turn is posted again (seatrial.yaml ``agents: NAME: retry:``);
every attempt is stored once, with the undisturbed run's verdicts and report, and each retry
shows as an event on the attempt's trace. An HTTP 500 is the agent's own failure: an ERROR,
never retried."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from seatrial.agent import AgentRetry, HttpAgent, resolve_agent
from seatrial.case import Case
from seatrial.errors import AgentError, AgentSpecError
from seatrial.store import Store
from seatrial.testing import AgentServer, Hang, HttpReply
from tests.agent._drive import drive, make_context
from tests.faults.conftest import (
    ATTEMPTS,
    expected_keys,
    report_view,
    scripted_reply,
    seatrial,
)

RETRY_EVENT = "seatrial.agent_retry"
TRANSIENT = [
    HttpReply(503, "restarting", headers={"Retry-After": "0"}),
    HttpReply(502, "bad gateway"),
    Hang(0),  # the connection closes with no answer
    HttpReply(504, "gateway timeout"),
]


class FlakyFor:
    """The scripted agent behind a front that fails its first ``failures`` requests."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.failed = 0
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> HttpReply | Hang | str:
        with self._lock:
            failing = self.failed < self.failures
            if failing:
                self.failed += 1
                reply = TRANSIENT[self.failed % len(TRANSIENT)]
        return reply if failing else scripted_reply(request)


@pytest.mark.slow
def test_a_run_through_a_while_of_5xx_answers_equals_the_undisturbed_run(
    tmp_path: Path, suite: Path, agent: AgentServer, undisturbed: dict[str, Any]
) -> None:
    flaky = FlakyFor(failures=40)
    db = tmp_path / "flaky.db"
    with AgentServer(flaky) as server:
        (tmp_path / "seatrial.yaml").write_text(
            "agents:\n"
            "  flaky:\n"
            f"    spec: {server.url}\n"
            "    retry: {tries: 8, backoff_s: 0.05, max_wait_s: 1}\n",
            encoding="utf-8",
        )
        result = seatrial(
            "run",
            str(suite),
            "--agent",
            "flaky",
            "--db",
            f"sqlite:///{db}",
            "--concurrency",
            "8",
            "--report-dir",
            str(tmp_path / "flaky"),
            cwd=tmp_path,
        )
        posts = len(server.requests)

    assert result.returncode == 0, result.stdout + result.stderr
    assert flaky.failed == 40
    assert posts == ATTEMPTS + 40
    view = report_view(tmp_path / "flaky" / "report.json")
    # An ERROR's reason names the agent's URL: the undisturbed run's agent has another port.
    view["attempts"] = [(*a[:4], a[4].replace(server.url, agent.url)) for a in view["attempts"]]
    assert view == undisturbed
    with Store.open(f"sqlite:///{db}") as store:
        (run,) = store.list_runs()
        records = store.attempts(run.run_id, with_traces=True)
    assert {(r.case_id, r.attempt): 1 for r in records} == expected_keys()
    assert len(records) == ATTEMPTS
    retries = [
        event
        for record in records
        for span in (record.trace.spans if record.trace else [])
        for event in span.events
        if event.name == RETRY_EVENT
    ]
    assert len(retries) == 40
    assert {str(e.attributes[f"{RETRY_EVENT}.reason"]).split(":")[0] for e in retries} == {
        "HTTP 502",
        "HTTP 503",
        "HTTP 504",
        "RemoteProtocolError",
    }


async def test_an_agent_that_stays_unavailable_is_an_error_after_the_last_try() -> None:
    async with AgentServer(lambda request: HttpReply(503, "down for maintenance")) as server:
        adapter = HttpAgent(server.url, retry=AgentRetry(tries=3, backoff_s=0.01))
        with pytest.raises(AgentError, match="HTTP 503") as caught:
            await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert caught.value.failure_type == "agent_error"
    assert len(server.requests) == 3


async def test_a_500_is_the_agents_answer_and_is_not_retried() -> None:
    async with AgentServer(lambda request: HttpReply(500, "KeyError: 'order'")) as server:
        adapter = HttpAgent(server.url, retry=AgentRetry(tries=5, backoff_s=0.01))
        with pytest.raises(AgentError, match="HTTP 500"):
            await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert len(server.requests) == 1


async def test_a_retry_after_longer_than_the_longest_wait_gives_up_at_once() -> None:
    away = HttpReply(503, "back in an hour", headers={"Retry-After": "3600"})
    async with AgentServer(lambda request: away) as server:
        adapter = HttpAgent(server.url, retry=AgentRetry(tries=5, max_wait_s=5))
        with pytest.raises(AgentError, match="HTTP 503"):
            await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert len(server.requests) == 1


async def test_a_fractional_retry_after_sets_the_wait_instead_of_the_backoff() -> None:
    replies = iter([HttpReply(503, "restarting", headers={"Retry-After": "0.05"}), "ok"])
    async with AgentServer(lambda request: next(replies)) as server:
        adapter = HttpAgent(server.url, retry=AgentRetry(tries=2, backoff_s=0.01))
        output, trace = await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert output.response == "ok"
    waits = [
        event.attributes[f"{RETRY_EVENT}.wait_s"]
        for span in trace.spans
        for event in span.events
        if event.name == RETRY_EVENT
    ]
    assert waits == [0.05]


def test_a_bad_retry_setting_names_the_agent_and_the_key() -> None:
    agents = {"flaky": {"spec": "http://127.0.0.1:9/chat", "retry": {"tries": 0}}}
    with pytest.raises(AgentSpecError, match=r"agent `flaky` in seatrial.yaml: retry.tries"):
        resolve_agent("flaky", agents=agents)
