"""``seatrial run --backend celery --gateway`` and ``--judge``: each worker runs its own gateway
proxy, a model's RPM limit holds across the workers, counted where the calls land (the model
server), the run's cassette records every attempt once, and the judge judges on workers."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply
from tests.distributed.conftest import AGENT as SCRIPTED_AGENT
from tests.distributed.conftest import SEATRIAL, WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

AGENT = f"python:{Path(__file__).parents[1] / 'gateway' / 'gateway_agents.py'}:async_model_agent"
KEY_ENV = "SEATRIAL_TEST_WORKER_MODEL_KEY"
CASES = 48
RPM = 240
"""4 calls a second, well below what two workers make without a limit; the bucket holds one
second's worth (docs/gateway.md, ``rpm``)."""
BURST = RPM // 60
WINDOW_S = 4.0
SLACK = 4
"""Calls the model server may see early: a call let go at t reaches the server a little
later, so two calls let go apart may land closer together."""
SPREAD_SHARE = 0.75
"""Of the time the limit needs for every call, the least the calls may span at the server
(the same allowance, as a share: without one shared limit they span about half)."""


def project(folder: Path, model_url: str) -> Path:
    (folder / "seatrial.yaml").write_text(
        "models:\n"
        "  main:\n"
        "    model: fake-model-2024-01-01\n"
        f"    base_url: {model_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        f"    rpm: {RPM}\n"
        "    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n"
        "gateway:\n"
        "  routing: {default: main}\n"
        "  cassette: {mode: record}\n",
        encoding="utf-8",
    )
    lines = ["suite: capitals", "cases:"]
    for number in range(1, CASES + 1):
        lines += [
            f"  - id: c{number:03d}",
            f'    input: "Capital of France? ({number})"',
            "    assertions: [{type: contains, value: Paris}]",
        ]
    suite = folder / "suite.yaml"
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return suite


def most_in_any_window(times: list[float], window_s: float) -> int:
    """The most calls that landed within ``window_s`` of each other."""
    ordered = sorted(times)
    most, first = 0, 0
    for last, at in enumerate(ordered):
        while at - ordered[first] >= window_s:
            first += 1
        most = max(most, last - first + 1)
    return most


def clear_rate_limits(broker_url: str) -> None:
    """Drop buckets an earlier test left in this Redis database."""
    import redis

    with redis.Redis.from_url(broker_url) as client:
        for key in client.scan_iter("seatrial:ratelimit:*"):
            client.delete(key)


def test_an_rpm_limit_holds_across_two_workers_each_with_its_own_gateway(
    tmp_path: Path,
    pg_store_url: str,
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    landed: list[float] = []
    lock = threading.Lock()

    def model(body: dict[str, Any]) -> FakeReply:
        with lock:
            landed.append(time.monotonic())
        return FakeReply("Paris.", input_tokens=10, output_tokens=2)

    clear_rate_limits(broker_env["SEATRIAL_BROKER_URL"])
    with FakeOpenAI(model) as upstream:
        suite = project(tmp_path, upstream.base_url)
        env = {
            **broker_env,
            "SEATRIAL_DB_URL": pg_store_url,
            KEY_ENV: "sk-worker-side",
            # Calls queue for the limit (between workers, a freed slot goes to whichever asks
            # first): give an attempt time to wait its turn, and the broker longer still
            # before it sends a task again.
            "SEATRIAL_VISIBILITY_TIMEOUT": "60",
        }
        workers = [start_worker(env, concurrency=4) for _ in range(2)]
        coordinator = subprocess.run(
            [
                SEATRIAL,
                "run",
                str(suite),
                "--agent",
                AGENT,
                "--backend",
                "celery",
                "--gateway",
                "--db",
                pg_store_url,
                "--timeout",
                "30",
            ],
            cwd=tmp_path,
            env={**os.environ, **env, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        logs = "\n".join(worker.output() for worker in workers)
        assert coordinator.returncode == 0, f"{coordinator.stdout}{coordinator.stderr}\n{logs}"

    # Every attempt asked the model once, through a worker's proxy, and passed.
    assert len(landed) == CASES
    with Store.open(pg_store_url) as store:
        run_id = store.list_runs()[0].run_id
        records = store.attempts(run_id)
        assert Counter((r.case_id, r.attempt) for r in records) == {
            (f"c{n:03d}", 1): 1 for n in range(1, CASES + 1)
        }
        assert {r.verdict for r in records} == {"PASS"}
        for record in records[:5]:
            [call] = store.attempt_trace(run_id, record.case_id, 1).model_calls()
            assert call.model == "fake-model-2024-01-01"
        assert len(store.model_calls(run_id)) == CASES
    # Both workers recorded into the run's one cassette, a whole line per call.
    lines = (tmp_path / ".seatrial" / "cassettes" / f"{run_id}.jsonl").read_text("utf-8")
    recorded = Counter(
        (line["case_id"], line["call"]) for line in map(json.loads, lines.split("\n")[:-1])
    )
    assert recorded == {(f"c{n:03d}", 1): 1 for n in range(1, CASES + 1)}
    # Both workers ran attempts, so both proxies called the model ...
    for worker in workers:
        assert worker.count("succeeded") > 0, worker.output()
    # ... and together they kept to one limit: the bucket's burst, then RPM / 60 a second.
    allowed = BURST + int(RPM / 60 * WINDOW_S) + SLACK
    assert most_in_any_window(landed, WINDOW_S) <= allowed
    # The limit was what paced the run: the calls spread over the time the limit needs.
    assert max(landed) - min(landed) >= SPREAD_SHARE * (CASES - BURST) / (RPM / 60)


def test_a_judged_run_on_a_worker_judges_every_attempt_once_and_queues_its_review(
    tmp_path: Path,
    pg_store_url: str,
    broker_env: dict[str, str],
    start_worker: Callable[..., WorkerProcess],
) -> None:
    cases = 6
    (tmp_path / "suite.yaml").write_text(
        "suite: judged\ncases:\n"
        + "".join(
            f'  - id: c{n}\n    input: "case-{n}"\n'
            "    assertions: [{type: llm_judge, criteria: The reply says ok.}]\n"
            for n in range(1, cases + 1)
        ),
        encoding="utf-8",
    )
    verdict = json.dumps(
        {"verdict": "FAIL", "confidence": 0.9, "failure_type": "semantic_mismatch", "reason": "no"}
    )
    with FakeOpenAI(verdict) as judge_server:
        (tmp_path / "seatrial.yaml").write_text(
            "models:\n"
            "  grader:\n"
            "    model: gpt-4o-2024-08-06\n"
            f"    base_url: {judge_server.base_url}\n"
            f"    api_key_env: {KEY_ENV}\n",
            encoding="utf-8",
        )
        env = {**broker_env, "SEATRIAL_DB_URL": pg_store_url, KEY_ENV: "sk-worker-side"}
        workers = [start_worker(env, concurrency=3)]
        coordinator = subprocess.run(
            [
                SEATRIAL,
                "run",
                "suite.yaml",
                "--agent",
                SCRIPTED_AGENT,
                "--backend",
                "celery",
                "--judge",
                "grader",
                "--db",
                pg_store_url,
                "--timeout",
                "5",
            ],
            cwd=tmp_path,
            env={**os.environ, **env, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        logs = "\n".join(worker.output() for worker in workers)
        assert coordinator.returncode in (0, 1), f"{coordinator.stdout}{coordinator.stderr}\n{logs}"
        judge_calls = len(judge_server.requests)

    assert judge_calls == cases
    with Store.open(pg_store_url) as store:
        run_id = store.list_runs()[0].run_id
        records = store.attempts(run_id)
        items = store.review_items()
        spend = store.spend_by_purpose(run_id)
    # An uncalibrated judge's FAIL is advisory: WARNING, and a review item for a person.
    assert sorted(r.case_id for r in records) == [f"c{n}" for n in range(1, cases + 1)]
    assert {r.verdict for r in records} == {"WARNING"}
    assert sorted((i.case_id, i.attempt, i.judge_model) for i in items) == [
        (f"c{n}", 1, "grader") for n in range(1, cases + 1)
    ]
    assert set(spend) == {"judge"}  # the workers' judge calls are in the run's ledger
