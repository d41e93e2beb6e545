"""Two stored runs whose report files are kept as golden files (tests/report/golden/).

The golden files were written by the report code that held every attempt in memory (before
issue 22); the streamed report files must stay byte for byte what it wrote.
"""

from __future__ import annotations

from seatrial.case import Case
from seatrial.record import AssertionResult, AttemptRecord, Metrics, RunInfo, Verdict
from seatrial.store import Store

BASELINE = "20261201-000000-base00"
RUN = "20261202-000000-cand00"
STARTED = 1_764_633_600.0

ODD = "坏了 <b>\"quoted\"</b> & 'apostrophe'\n\tsecond line ]]> 🚀"
"""Text that XML, JSON and Markdown each escape differently."""


def _cases() -> list[Case]:
    return [
        Case(id="refund", name="退款", input="x", category="billing", priority="P0"),
        Case(id="lookup", input="y", category="orders"),
        Case(id="flaky", input="z", category="orders", priority="P2"),
        Case(id="broken", input="w", category="billing"),
        Case(id="warned", input="v"),
        Case(id="never-ran", input="u", category="orders"),
    ]


def _attempt(run_id: str, case_id: str, n: int, verdict: Verdict, **more: object) -> AttemptRecord:
    failure = more.pop("failure_type", None if verdict == "PASS" else "wrong_params")
    values: dict[str, object] = {
        "run_id": run_id,
        "case_id": case_id,
        "attempt": n,
        "verdict": verdict,
        "failure_type": failure,
        "reason": f"{failure}: {ODD}" if failure else "all 2 assertions passed",
        "score": 1.0 if verdict == "PASS" else 1e-7,
        "metrics": Metrics(
            tool_calls=n,
            model_calls=2,
            wall_time_ms=1234.5 + 100 * n,
            input_tokens=900 + n,
            output_tokens=40,
            cost_usd=0.0025 * n,
        ),
        "assertions": [
            AssertionResult(
                id="tool_called", level="L1", type="tool_called", verdict="pass", reason="ok"
            ),
            AssertionResult(
                id="tool_args",
                level="L1",
                type="tool_args",
                verdict="pass" if verdict == "PASS" else "fail",
                reason=ODD,
                failure_type=None if verdict == "PASS" else failure,
            ),
        ],
        "response": f"reply {n}: {ODD}",
        "responses": [f"reply {n}: {ODD}"],
        "started_at": STARTED + n,
        "finished_at": STARTED + n + 1.25,
    }
    values.update(more)
    return AttemptRecord.model_validate(values)


def store_runs(store: Store) -> str:
    """Store a baseline and a run that names it; return the run's id."""
    for run_id, started in ((BASELINE, STARTED - 86_400), (RUN, STARTED)):
        settings: dict[str, object] = {"repeats": 3, "gate": {"min_pass_rate": 0.5}}
        if run_id == RUN:
            settings["baseline"] = {"ref": BASELINE, "run_id": BASELINE}
            settings["gates"] = [
                {"id": "no regressions", "max_regression": {"points": 0.0}},
                {
                    "id": "latency",
                    "max_latency_p95_ms": 10_000,
                    "max_failures_of_type": {"timeout": 0},
                },
            ]
        store.create_run(
            RunInfo(
                run_id=run_id,
                suite="客服 <suite>",
                agent="http://127.0.0.1:9/agent",
                tags=["nightly"],
                started_at=started,
                seatrial_version="0.0.0-golden",
                settings=settings,
            ),
            _cases(),
        )
    store.save_attempts(
        [_attempt(BASELINE, case, n, "PASS") for case in ("refund", "lookup") for n in (1, 2, 3)]
    )
    store.save_attempts(
        [
            _attempt(RUN, "refund", 1, "FAIL", failure_type="permission_violation"),
            _attempt(RUN, "refund", 2, "PASS"),
            _attempt(RUN, "refund", 3, "FAIL"),
            _attempt(RUN, "lookup", 1, "PASS"),
            _attempt(RUN, "lookup", 2, "PASS"),
            _attempt(RUN, "lookup", 3, "PASS"),
            _attempt(RUN, "flaky", 1, "PASS"),
            _attempt(RUN, "flaky", 2, "WARNING", failure_type=None, reason=f"advisory: {ODD}"),
            _attempt(RUN, "broken", 1, "ERROR", failure_type="timeout", error=ODD),
            _attempt(RUN, "warned", 1, "WARNING", failure_type=None, reason="judge advisory"),
            # An attempt of a case the run did not list: no report shows it.
            _attempt(RUN, "unlisted", 1, "FAIL"),
        ]
    )
    for run_id in (BASELINE, RUN):
        store.finish_run(run_id, "finished", STARTED + 600)
    return RUN
