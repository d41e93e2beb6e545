"""How fast the dashboard answers over a large store: 1,000 runs of 200 attempts each.

Seeds a fresh SQLite store (or the database ``--db`` names; it should be empty) with 1,000
finished runs x 200 attempts (50 cases x 4 repeats, 3 suites, 4 agents, 6 categories, a
realistic verdict mix with failure types, metrics, a 3-span trace per attempt) and a few
review items, then starts the app in-process and times each page and API route of the
dashboard's contract: one warm-up request, then the median of 5. A route another part of the
dashboard has not built yet answers 404 and is reported as such, not as a failure.

    .venv/bin/python benchmarks/dashboard_load.py [--db URL] [--runs N] [--repeat N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from seatrial.case import Case
from seatrial.record import AttemptRecord, Metrics, RunInfo
from seatrial.store import ReviewItem, Store
from seatrial.trace import Span, Trace, attrs, new_id
from seatrial.web._app import create_app

CASES = 50
REPEATS = 4
SUITES = ("support", "booking", "search")
AGENTS = ("python:agents:v1", "python:agents:v2", "http://localhost:9000/agent", "openai:gpt-4o")
CATEGORIES = ("read_only", "write", "privacy", "failing_tool", "multi_turn", "refusal")
FAILURES = ("loop", "wrong_tool", "permission_violation", "wrong_answer", "timeout")
GOAL_MS = 300.0
DAY = 86_400.0


def suite_cases(suite: str) -> list[Case]:
    """The 50 cases of a suite; the first 5 are P0."""
    return [
        Case(
            id=f"{suite}-{i:03d}",
            input=f"request {i} for {suite}",
            category=CATEGORIES[i % len(CATEGORIES)],
            priority="P0" if i < 5 else "P1",
            tags=["smoke"] if i % 10 == 0 else [],
        )
        for i in range(CASES)
    ]


def make_trace(start_s: float, wall_ms: float, tool: str, tokens: tuple[int, int]) -> Trace:
    """An agent span, a model call and a tool call."""
    trace_id, agent_id = new_id(128), new_id()
    start = int(start_s * 1e9)
    end = start + int(wall_ms * 1e6)
    chat_end = start + int(wall_ms * 0.6e6)
    return Trace(
        trace_id=trace_id,
        spans=[
            Span(
                trace_id=trace_id,
                span_id=agent_id,
                name="invoke_agent bench",
                start_time_unix_nano=start,
                end_time_unix_nano=end,
                attributes={attrs.OPERATION: attrs.OP_INVOKE_AGENT},
                status="ok",
            ),
            Span(
                trace_id=trace_id,
                span_id=new_id(),
                parent_span_id=agent_id,
                name="chat gpt-4o",
                start_time_unix_nano=start + 1000,
                end_time_unix_nano=chat_end,
                attributes={
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "gpt-4o",
                    attrs.INPUT_TOKENS: tokens[0],
                    attrs.OUTPUT_TOKENS: tokens[1],
                    attrs.COST_USD: tokens[0] * 2.5e-6 + tokens[1] * 1e-5,
                },
                status="ok",
            ),
            Span(
                trace_id=trace_id,
                span_id=new_id(),
                parent_span_id=agent_id,
                name=f"execute_tool {tool}",
                start_time_unix_nano=chat_end,
                end_time_unix_nano=end - 1000,
                attributes={
                    attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                    attrs.TOOL_NAME: tool,
                    attrs.TOOL_ARGUMENTS: '{"path": "README.md"}',
                    attrs.TOOL_RESULT: '{"ok": true}',
                },
                status="ok",
            ),
        ],
    )


def make_attempts(
    rng: random.Random, info: RunInfo, cases: list[Case], skill: float
) -> list[AttemptRecord]:
    """200 attempts of one run; ``skill`` shifts the pass rate."""
    records = []
    clock = info.started_at
    for index, case in enumerate(cases):
        hard = (index * 7919 % 100) / 100  # a fixed difficulty per case
        for attempt in range(1, REPEATS + 1):
            roll = rng.random()
            p_pass = min(0.99, skill + 0.25 - hard * 0.4)
            if roll < p_pass:
                verdict, failure, reason = "PASS", None, "every assertion passed"
            elif roll < p_pass + 0.05:
                verdict, failure, reason = "WARNING", None, "the judge was unsure"
            elif roll < p_pass + 0.08:
                verdict, failure, reason = "ERROR", "timeout", "the agent did not answer in 30 s"
            else:
                failure = FAILURES[(index + attempt) % 4]
                verdict, reason = "FAIL", f"assertion failed: {failure}"
            wall = rng.lognormvariate(6.5, 0.5)
            tokens = (rng.randint(300, 3000), rng.randint(50, 600))
            trace = make_trace(clock, wall, "read_file" if index % 2 else "write_file", tokens)
            records.append(
                AttemptRecord(
                    run_id=info.run_id,
                    case_id=case.id,
                    attempt=attempt,
                    verdict=verdict,  # type: ignore[arg-type]
                    failure_type=failure,
                    reason=reason,
                    score=1.0 if verdict == "PASS" else 0.0,
                    metrics=Metrics.of(trace),
                    response=f"Done: {case.id} attempt {attempt}.",
                    responses=[f"Done: {case.id} attempt {attempt}."],
                    user_id="bench-user",
                    session_id=f"s-{index}-{attempt}",
                    started_at=clock,
                    finished_at=clock + wall / 1000,
                    trace=trace,
                )
            )
            clock += wall / 1000
    return records


def seed(store: Store, runs: int) -> tuple[list[str], float]:
    """Store ``runs`` finished runs, oldest first; returns their ids and the seconds taken."""
    rng = random.Random(7)
    began = time.perf_counter()
    cases = {suite: suite_cases(suite) for suite in SUITES}
    now = time.time()
    ids = []
    for number in range(runs):
        suite = SUITES[number % len(SUITES)]
        agent = AGENTS[number % len(AGENTS)]
        started = now - (runs - number) * (90 * DAY / runs)
        info = RunInfo(
            run_id=f"bench-{number:04d}-{new_id(32)}",
            suite=suite,
            agent=agent,
            tags=[f"v{number % 4 + 1}", "nightly" if number % 2 else "pr"],
            started_at=started,
            settings={"gate": {"min_pass_rate": 0.75}},
            seatrial_version="bench",
        )
        store.create_run(info, cases[suite])
        skill = 0.55 + 0.1 * (number % len(AGENTS))
        store.save_attempts(make_attempts(rng, info, cases[suite], skill))
        store.finish_run(info.run_id, "finished", started + 600)
        ids.append(info.run_id)
        if (number + 1) % 100 == 0:
            print(f"  seeded {number + 1} runs ({time.perf_counter() - began:.0f} s)", flush=True)
    newest = ids[-1]
    store.add_review_items(
        [
            ReviewItem(
                run_id=newest,
                case_id=cases[SUITES[(runs - 1) % len(SUITES)]][i].id,
                attempt=1,
                assertion_id="judge",
                why="warning",
                judge_model="gpt-4o-mini",
                judge_verdict="WARNING",
                judge_reason="the answer may be incomplete",
                confidence=0.55,
                input="what does the config say?",
                output="It says nothing about retries.",
                category="read_only",
            )
            for i in range(12)
        ]
    )
    return ids, time.perf_counter() - began


def routes(store: Store, ids: list[str]) -> list[tuple[str, str]]:
    """(label, path) of every page and API route of the contract, over the seeded data."""
    newest, older = ids[-1], ids[-1 - len(SUITES)]  # same suite
    suite = store.get_run(newest).suite
    attempts = store.attempts(newest)
    failing = next((a for a in attempts if a.verdict == "FAIL"), attempts[0])
    case, n = failing.case_id, failing.attempt
    item = store.review_items()[0].id
    pair = f"base={older}&cand={newest}"
    return [
        ("runs list", "/runs"),
        ("runs, filtered", f"/runs?suite={suite}&tag=nightly"),
        ("runs, page 10", "/runs?page=10"),
        ("run", f"/runs/{newest}"),
        ("case", f"/runs/{newest}/cases/{case}"),
        ("attempt", f"/runs/{newest}/cases/{case}/{n}"),
        ("compare", f"/compare?{pair}"),
        ("compare case", f"/compare/case?{pair}&case={case}"),
        ("leaderboard", f"/leaderboard?suite={suite}"),
        ("coverage", f"/coverage?suite={suite}"),
        ("review queue", "/review"),
        ("review item", f"/review/{item}"),
        ("calibration", "/calibration"),
        ("api runs", "/api/runs"),
        ("api trends", "/api/trends"),
        ("api run", f"/api/runs/{newest}"),
        ("api case", f"/api/runs/{newest}/cases/{case}"),
        ("api attempt", f"/api/runs/{newest}/cases/{case}/{n}"),
        ("api compare", f"/api/compare?{pair}"),
        ("api diff", f"/api/diff?{pair}&case={case}"),
        ("api leaderboard", f"/api/leaderboard?suite={suite}"),
        ("api coverage", f"/api/coverage?suite={suite}"),
        ("api review", "/api/review"),
        ("api calibrations", "/api/calibrations"),
    ]


def time_routes(client: TestClient, paths: list[tuple[str, str]], repeat: int) -> None:
    """Print, for each route, its first (cold) time and the median of ``repeat`` after it."""
    head = f"{'route':<18} {'status':>6} {'first ms':>9} {'median ms':>10} {'/ goal':>7}"
    print(f"\n{head}  under 300 ms")
    for label, path in paths:
        began = time.perf_counter()
        reply = client.get(path)
        first = (time.perf_counter() - began) * 1000
        if reply.status_code == 404:
            print(f"{label:<18} {404:>6} {'':>9} {'':>10} {'':>7}  not built yet (404)")
            continue
        samples = []
        for _ in range(repeat):
            began = time.perf_counter()
            client.get(path)
            samples.append((time.perf_counter() - began) * 1000)
        median = statistics.median(samples)
        verdict = "yes" if median < GOAL_MS else "NO"
        ratio = median / GOAL_MS
        figures = f"{first:>9.1f} {median:>10.1f} {ratio:>7.2f}"
        print(f"{label:<18} {reply.status_code:>6} {figures}  {verdict}")


def main() -> None:
    """Seed, then time every route."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = options.db or f"sqlite:///{Path(folder) / 'seatrial.db'}"
        with Store.open(url, project_dir=Path(folder)) as store:
            print(f"seeding {options.runs} runs x {CASES * REPEATS} attempts into {store.url}")
            ids, seconds = seed(store, options.runs)
            total = len(ids) * CASES * REPEATS
            print(f"seeded {len(ids)} runs, {total} attempts in {seconds:.1f} s")
            client = TestClient(create_app(store))
            time_routes(client, routes(store, ids), options.repeat)


if __name__ == "__main__":
    main()
