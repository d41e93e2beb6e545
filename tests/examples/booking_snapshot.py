"""The booking example's verdicts, traces and ledger rows in a form two runs can be compared
in: ids, clocks, durations and random suffixes left out, spans referring to their parent by
position. ``tests/examples/booking_expected.json`` holds this form as the example ran before
the ``model:`` agent's calls moved in process (issue 22); regenerate it only on purpose::

    PYTHONPATH=src python -m tests.examples.booking_snapshot tests/examples/booking_expected.json
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from seatrial._execute import SuiteRun, default_options, execute_suite_async
from seatrial.config import Config
from seatrial.gateway import ModelConfig, Price
from seatrial.store import Store
from seatrial.testing import FakeOpenAI
from seatrial.trace import Span, Trace
from tests.examples.booking_model import booking_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "booking"
SUITES = ("single_turn", "multi_turn", "contract")

_VOLATILE_ATTRIBUTES = frozenset(
    {
        "gen_ai.conversation.id",  # the attempt's random session id
        "seatrial.gateway.attempts",  # each try's latency
        "seatrial.gateway.limit_wait_ms",
        "gen_ai.response.id",
        "gen_ai.tool.call.id",  # made by the session, random
    }
)
_CALL_ID = re.compile(r"call_[0-9a-f_]+")
"""A tool call id (the scripted model numbers its calls in the order the server saw them)."""
_VOLATILE_ROW_FIELDS = frozenset({"id", "run_id", "created_at", "latency_ms"})


def _attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _CALL_ID.sub("call_*", value) if isinstance(value, str) else value
        for key, value in sorted(attributes.items())
        if key not in _VOLATILE_ATTRIBUTES
    }


def normal_trace(trace: Trace) -> list[dict[str, Any]]:
    """The trace's spans without ids or clocks, each naming its parent's position."""
    position = {span.span_id: n for n, span in enumerate(trace.spans)}

    def one(span: Span) -> dict[str, Any]:
        return {
            "name": span.name,
            "parent": position.get(span.parent_span_id) if span.parent_span_id else None,
            "ended": span.end_time_unix_nano is not None,
            "status": span.status,
            "status_message": span.status_message,
            "attributes": _attributes(span.attributes),
            "events": [
                {"name": event.name, "attributes": _attributes(event.attributes)}
                for event in span.events
            ],
        }

    return [one(span) for span in trace.spans]


def observed(done: SuiteRun, store: Store) -> dict[str, Any]:
    """One suite's run: each case's verdict, and each attempt's record, trace and ledger."""
    cases: dict[str, Any] = {}
    for case in done.report.cases:
        attempts = []
        for attempt in case.attempts:
            assert attempt.trace is not None
            rows = store.model_calls(done.run_id, case.case_id, attempt.attempt)
            attempts.append(
                {
                    "verdict": attempt.verdict,
                    "failure_type": attempt.failure_type,
                    "reason": attempt.reason,
                    "error": attempt.error,
                    "responses": attempt.responses,
                    "final_state": attempt.final_state,
                    "assertions": [
                        {"type": r.type, "verdict": r.verdict, "reason": r.reason}
                        for r in attempt.assertions
                    ],
                    "trace": normal_trace(attempt.trace),
                    "model_calls": sorted(
                        (
                            {
                                k: v
                                for k, v in row.model_dump(mode="json").items()
                                if k not in _VOLATILE_ROW_FIELDS
                            }
                            for row in rows
                        ),
                        key=lambda row: json.dumps(row, sort_keys=True),
                    ),
                }
            )
        cases[case.case_id] = {"verdict": case.verdict, "attempts": attempts}
    # Sums of the ledger's costs, rounded: the store adds the rows in the order they were
    # written, which forked workers change, and float addition is not associative.
    spend = {purpose: round(usd, 9) for purpose, usd in done.report.spend_usd.items()}
    return {"cases": cases, "spend_usd": spend}


def booking_config(folder: Path, base_url: str) -> Config:
    """A copy of the example whose one model is the scripted one at ``base_url``."""
    from tests.examples.test_booking_example import example_project

    model = ModelConfig(
        name="booking-model",
        model="qwen2.5-7b-instruct",
        base_url=base_url,
        price=Price(input_per_mtok=1.0, output_per_mtok=2.0),
    )
    return example_project(folder, model)


async def run_example(folder: Path, workers: int = 1) -> dict[str, Any]:
    """Every suite of the example against the scripted model, observed."""
    with FakeOpenAI(booking_model) as upstream:
        return await run_suites(folder, upstream.base_url, workers)


async def run_suites(folder: Path, base_url: str, workers: int = 1) -> dict[str, Any]:
    """Every suite of the example against the scripted model at ``base_url``, observed."""
    seen: dict[str, Any] = {}
    config = booking_config(folder, base_url)
    db = f"sqlite:///{folder / 'seatrial.db'}"
    with Store.open(db) as store:
        for suite in SUITES:
            options = default_options(config, workers=workers)
            done = await execute_suite_async(
                config.project_dir / "suites" / f"{suite}.yaml",
                config=config,
                store=store,
                options=options,
                with_traces=True,
                write_report_files=False,
            )
            seen[suite] = observed(done, store)
    return seen


def main() -> None:
    """Write the example's observed form to the file named on the command line."""
    with tempfile.TemporaryDirectory() as folder:
        seen = asyncio.run(run_example(Path(folder)))
    text = json.dumps(seen, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    Path(sys.argv[1]).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
