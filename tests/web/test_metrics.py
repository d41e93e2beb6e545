"""``GET /metrics`` of the dashboard: the latest run of each agent and suite, read with the
Prometheus client's own text parser from the real app over a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from seatrial.case import Case
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.store import Store
from seatrial.web._app import create_app
from seatrial.web._metrics import LATENCY_BUCKETS_S
from tests.web.conftest import serve

SUITE = "support"
TOKEN = "metrics-test-token"


class Try(NamedTuple):
    """One stored attempt: its case, verdict, failure type, wall time and spend."""

    case_id: str
    verdict: str
    failure_type: str | None
    wall_time_ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


def store_run(
    store: Store,
    run_id: str,
    agent: str,
    started_at: float,
    cases: list[Case],
    tries: list[Try],
    **fields: Any,
) -> None:
    """A run of SUITE with ``cases`` and one attempt per try (numbered per case)."""
    fields.setdefault("status", "finished")
    info = RunInfo(run_id=run_id, suite=SUITE, agent=agent, started_at=started_at, **fields)
    store.create_run(info, cases)
    numbers: dict[str, int] = {}
    records = []
    for t in tries:
        numbers[t.case_id] = numbers.get(t.case_id, 0) + 1
        metrics = Metrics(
            wall_time_ms=t.wall_time_ms,
            input_tokens=t.input_tokens,
            output_tokens=t.output_tokens,
            cost_usd=t.cost_usd,
        )
        records.append(
            AttemptRecord(
                run_id=run_id,
                case_id=t.case_id,
                attempt=numbers[t.case_id],
                verdict=t.verdict,
                failure_type=t.failure_type,
                metrics=metrics,
            )
        )
    store.save_attempts(records)


def case(case_id: str, category: str = "", priority: str = "P1") -> Case:
    return Case(id=case_id, input="hi", category=category, priority=priority)


NEW_TRIES = [
    Try("refund-1", "FAIL", "loop", 2000, 300, 40, 0.003),
    Try("refund-1", "FAIL", "loop", 400, 100, 10, 0.001),
    Try("refund-2", "PASS", None, 800, 200, 20, 0.002),
    Try("faq-1", "PASS", None, 300, 50, 5, 0.0005),
    Try("faq-1", "ERROR", "agent_error", 12_000, 0, 0, 0.0),
    Try("misc", "FAIL", "permission_violation", 60_000, 1000, 100, 0.01),
]
"""The newer run of agent ``bot``: 2 of 6 attempts pass, a P0 case fails (gates not met)."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Agent ``bot``: an older run that passed everything, the newer run (NEW_TRIES), and a
    replay and a running run after it; agent ``bot-v2``: one passing run."""
    folder: Path = tmp_path_factory.mktemp("metrics")
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as opened:
        store_run(
            opened,
            "old",
            "bot",
            1000.0,
            [case("refund-1", "旧", "P0")],
            [Try("refund-1", "PASS", None, 100, 7, 7, 1.0)] * 4,
        )
        store_run(
            opened,
            "new",
            "bot",
            2000.0,
            [
                case("refund-1", "退款", "P0"),
                case("refund-2", "退款"),
                case("faq-1", "faq", "P2"),
                case("misc"),
            ],
            NEW_TRIES,
        )
        store_run(
            opened,
            "replayed",
            "bot",
            3000.0,
            [case("refund-1", "replayed")],
            [Try("refund-1", "PASS", None, 100)],
            tags=["replay"],
        )
        store_run(
            opened,
            "running",
            "bot",
            4000.0,
            [case("refund-1", "running")],
            [Try("refund-1", "PASS", None, 100)],
            status="running",
        )
        store_run(
            opened,
            "v2",
            "bot-v2",
            1500.0,
            [case("faq-1", "faq")],
            [Try("faq-1", "PASS", None, 900)],
        )
        yield opened


Samples = dict[tuple[Any, ...], float]


def key(name: str, **labels: str) -> tuple[Any, ...]:
    return (name, *sorted(labels.items()))


def parse(text: str) -> Samples:
    """Every sample as ``(name, (label, value), ...) -> value``, by the client's parser."""
    return {
        (sample.name, *sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def named(found: Samples, name: str) -> Samples:
    return {k: v for k, v in found.items() if k[0] == name}


@pytest.fixture(scope="module")
def found(store: Store) -> Samples:
    client = TestClient(create_app(store, token=TOKEN))
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(answer.text)


def test_the_latest_finished_run_of_each_agent_is_the_one_exported(found: Samples) -> None:
    assert named(found, "seatrial_run_info") == {
        key("seatrial_run_info", agent="bot", suite=SUITE, run_id="new"): 1,
        key("seatrial_run_info", agent="bot-v2", suite=SUITE, run_id="v2"): 1,
    }
    assert named(found, "seatrial_run_start_time_seconds") == {
        key("seatrial_run_start_time_seconds", agent="bot", suite=SUITE): 2000.0,
        key("seatrial_run_start_time_seconds", agent="bot-v2", suite=SUITE): 1500.0,
    }
    # The newer run's P0 case failed; bot-v2's run passed.
    assert named(found, "seatrial_run_gates_met") == {
        key("seatrial_run_gates_met", agent="bot", suite=SUITE): 0,
        key("seatrial_run_gates_met", agent="bot-v2", suite=SUITE): 1,
    }
    # Neither the older run's category nor the replay's nor the running run's shows.
    categories = {dict(k[1:]).get("category") for k in named(found, "seatrial_run_attempts")}
    assert categories == {"退款", "faq", ""}


def test_pass_ratios_attempts_and_failures_are_the_newer_runs(found: Samples) -> None:
    bot = {"agent": "bot", "suite": SUITE}
    assert found[key("seatrial_run_pass_ratio", **bot)] == pytest.approx(2 / 6)
    assert found[key("seatrial_run_pass_ratio", agent="bot-v2", suite=SUITE)] == 1.0
    ratio = "seatrial_run_category_pass_ratio"
    assert found[key(ratio, **bot, category="退款")] == pytest.approx(1 / 3)
    assert found[key(ratio, **bot, category="faq")] == pytest.approx(1 / 2)
    # Cases without a category: category="" (which Prometheus stores as no label at all).
    assert found[key(ratio, **bot, category="")] == 0.0
    attempts = {
        k: v for k, v in named(found, "seatrial_run_attempts").items() if ("agent", "bot") in k
    }
    assert attempts == {
        key("seatrial_run_attempts", **bot, category="退款", verdict="FAIL"): 2,
        key("seatrial_run_attempts", **bot, category="退款", verdict="PASS"): 1,
        key("seatrial_run_attempts", **bot, category="faq", verdict="PASS"): 1,
        key("seatrial_run_attempts", **bot, category="faq", verdict="ERROR"): 1,
        key("seatrial_run_attempts", **bot, category="", verdict="FAIL"): 1,
    }
    assert named(found, "seatrial_run_failures") == {
        key("seatrial_run_failures", **bot, failure_type="loop"): 2,
        key("seatrial_run_failures", **bot, failure_type="agent_error"): 1,
        key("seatrial_run_failures", **bot, failure_type="permission_violation"): 1,
    }


def test_tokens_and_cost_are_the_newer_runs_sums(found: Samples) -> None:
    bot = {"agent": "bot", "suite": SUITE}
    assert found[key("seatrial_run_tokens", **bot, type="input")] == 1650
    assert found[key("seatrial_run_tokens", **bot, type="output")] == 175
    assert found[key("seatrial_run_cost_usd", **bot)] == pytest.approx(0.0165)


def test_the_latency_histogram_counts_each_categorys_attempts_in_its_buckets(
    found: Samples,
) -> None:
    name = "seatrial_run_attempt_duration_seconds"
    bot = {"agent": "bot", "suite": SUITE}

    def buckets(category: str) -> dict[str, float]:
        labels = {**bot, "category": category}
        return {
            dict(k[1:])["le"]: v
            for k, v in named(found, f"{name}_bucket").items()
            if {k2: v2 for k2, v2 in k[1:] if k2 != "le"} == labels
        }

    bounds = [repr(float(b)) for b in LATENCY_BUCKETS_S] + ["+Inf"]
    # 退款: 2.0 s, 0.4 s, 0.8 s
    refund = buckets("退款")
    assert list(refund) == bounds
    assert [refund[b] for b in ("0.25", "0.5", "1.0", "2.5", "+Inf")] == [0, 1, 2, 3, 3]
    assert found[key(f"{name}_count", **bot, category="退款")] == 3
    assert found[key(f"{name}_sum", **bot, category="退款")] == pytest.approx(3.2)
    # faq: 0.3 s and 12 s
    faq = buckets("faq")
    assert [faq[b] for b in ("0.25", "0.5", "10.0", "30.0")] == [0, 1, 1, 2]
    # no category: 60 s exactly, inside the 60 s bucket (le is inclusive)
    plain = buckets("")
    assert [plain[b] for b in ("30.0", "60.0", "+Inf")] == [0, 1, 1]


def test_run_counts_leave_out_replays_and_keep_each_status(found: Samples) -> None:
    assert named(found, "seatrial_runs") == {
        key("seatrial_runs", agent="bot", suite=SUITE, status="finished"): 2,
        key("seatrial_runs", agent="bot", suite=SUITE, status="running"): 1,
        key("seatrial_runs", agent="bot-v2", suite=SUITE, status="finished"): 1,
    }


def test_metrics_need_the_dashboards_token_as_a_bearer_header(store: Store) -> None:
    client = TestClient(create_app(store, token=TOKEN))
    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401
    assert TOKEN not in wrong.text


def test_an_empty_store_exports_no_run_figures_and_still_parses(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'empty.db'}") as empty:
        answer = TestClient(create_app(empty)).get("/metrics")
    assert answer.status_code == 200
    assert parse(answer.text) == {}


def test_a_newer_finished_run_replaces_the_figures_at_the_next_scrape(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'two.db'}") as two:
        client = TestClient(create_app(two))
        store_run(two, "first", "bot", 10.0, [case("a", "x")], [Try("a", "PASS", None, 100)])
        before = parse(client.get("/metrics").text)
        store_run(two, "second", "bot", 20.0, [case("a", "x")], [Try("a", "FAIL", "loop", 100)])
        after = parse(client.get("/metrics").text)
    bot = {"agent": "bot", "suite": SUITE}
    assert before[key("seatrial_run_pass_ratio", **bot)] == 1.0
    assert after[key("seatrial_run_pass_ratio", **bot)] == 0.0
    assert after[key("seatrial_run_info", **bot, run_id="second")] == 1
    assert after[key("seatrial_runs", **bot, status="finished")] == 2


@pytest.mark.slow
def test_seatrial_serve_answers_a_prometheus_scrape_with_its_token(
    store: Store, tmp_path: Path
) -> None:
    with serve(str(store.url), tmp_path, "--token", TOKEN) as base:
        refused = httpx.get(f"{base}/metrics", timeout=30)
        scraped = httpx.get(
            f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        )
    assert refused.status_code == 401
    assert scraped.status_code == 200
    found = parse(scraped.text)
    assert found[key("seatrial_run_info", agent="bot", suite=SUITE, run_id="new")] == 1
