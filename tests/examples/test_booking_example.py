"""The Chinese booking example (examples/booking) runs end to end: against a scripted model
on every test run (its suites, and ``seatrial contract`` on its tool schema), and against a
real OpenAI-compatible model when one is configured.

The real-model test reads ``SEATRIAL_TEST_MODEL_URL`` (the server's base URL, e.g.
``http://127.0.0.1:8000/v1``), ``SEATRIAL_TEST_MODEL_NAME`` (the model id; default
``qwen2.5-7b-instruct``) and ``SEATRIAL_TEST_MODEL_KEY`` (the API key, when the server wants
one); without ``SEATRIAL_TEST_MODEL_URL`` it is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seatrial._execute import SuiteRun, execute_suite_async
from seatrial.config import Config, load_config
from seatrial.gateway import ModelConfig, Price
from seatrial.testing import FakeOpenAI
from tests.examples.booking_model import booking_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "booking"
SEATRIAL = str(Path(sys.executable).parent / "seatrial")
SUITES = ("single_turn", "multi_turn", "contract")
MODEL_URL_ENV = "SEATRIAL_TEST_MODEL_URL"
MODEL_NAME_ENV = "SEATRIAL_TEST_MODEL_NAME"
MODEL_KEY_ENV = "SEATRIAL_TEST_MODEL_KEY"


def example_project(folder: Path, model: ModelConfig) -> Config:
    """A copy of the example (runs write nothing into the repository) whose one model is
    ``model``."""
    project = folder / "booking"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".seatrial", "__pycache__"))
    config = load_config(project)
    return config.model_copy(update={"models": {model.name: model}})


async def run_suite(config: Config, suite: str, folder: Path) -> SuiteRun:
    return await execute_suite_async(
        config.project_dir / "suites" / f"{suite}.yaml",
        config=config,
        db=f"sqlite:///{folder / 'seatrial.db'}",
        report_dir=folder / "reports" / suite,
    )


def verdicts(done: SuiteRun) -> dict[str, str]:
    return {case.case_id: case.verdict for case in done.report.cases}


@pytest.mark.slow
async def test_the_example_suites_run_against_a_scripted_model_through_the_gateway(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(booking_model) as upstream:
        model = ModelConfig(
            name="booking-model",
            model="qwen2.5-7b-instruct",
            base_url=upstream.base_url,
            price=Price(input_per_mtok=1.0, output_per_mtok=2.0),
        )
        config = example_project(tmp_path, model)
        done = {suite: await run_suite(config, suite, tmp_path) for suite in SUITES}

    # The scripted model books without asking the passenger's name, and resends a refund the
    # tool said lacked a parameter unchanged: exactly those two cases fail.
    assert verdicts(done["single_turn"]) == {
        "search-beijing-shanghai": "PASS",
        "order-status": "PASS",
        "ask-for-passenger-name": "FAIL",
        "unknown-order": "PASS",
    }
    assert verdicts(done["multi_turn"]) == {
        "returning-user-rebooks": "PASS",
        "simulated-refund": "PASS",
    }
    assert verdicts(done["contract"]) == {
        "search-after-http-500": "PASS",
        "book-with-illegal-cabin": "PASS",
        "refund-missing-parameter": "FAIL",
    }
    [name_case] = [c for c in done["single_turn"].report.cases if c.verdict == "FAIL"]
    assert "book_ticket" in name_case.attempts[0].reason
    [refund] = [c for c in done["contract"].report.cases if c.verdict == "FAIL"]
    failed = {r.type for r in refund.attempts[0].assertions if r.verdict != "pass"}
    # The resent call still lacks the order number the fault named: neither a repair nor new.
    assert failed == {"no_identical_retry", "repairs_within"}

    # Every model call went through the gateway: priced, and the simulated user's on its own
    # line; the answering model is the pinned one, so nothing is flagged.
    assert done["single_turn"].report.spend_usd["agent"] > 0
    assert set(done["multi_turn"].report.spend_usd) == {"agent", "simulator"}
    assert all(not run.report.version_drift for run in done.values())


@pytest.mark.slow
def test_seatrial_contract_on_the_examples_tool_schema_prints_the_recovery_table(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(booking_model) as upstream:
        project = tmp_path / "booking"
        shutil.copytree(EXAMPLE, project)
        yaml_file = project / "seatrial.yaml"
        text = yaml_file.read_text(encoding="utf-8")
        yaml_file.write_text(
            text.replace("http://127.0.0.1:8000/v1", upstream.base_url), encoding="utf-8"
        )
        done = subprocess.run(
            [SEATRIAL, "contract", "tools/booking_tools.json", "--agent", "model:booking-model"]
            + ["--faults", "bad_enum,http_500", "--format", "json"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr  # every attempt passes
    table = json.loads(done.stdout)
    assert (table["passed"], table["attempts"], table["gate"]["met"]) == (9, 9, True)
    rows = {(r["tool"], r["fault"]): r for r in table["rows"]}
    # Every tool with an enum gets a bad_enum case; get_order has none.
    assert set(rows) == {
        *((tool, "http_500") for tool in ("search_flights", "book_ticket", "get_order")),
        *((tool, "http_500") for tool in ("cancel_order", "request_refund")),
        *((tool, "bad_enum") for tool in ("search_flights", "book_ticket", "cancel_order")),
        ("request_refund", "bad_enum"),
    }
    for (tool, fault), row in rows.items():
        # The scripted model picks an allowed value after bad_enum, and resends the identical
        # call after an HTTP 500 (the right repair there): both repaired in one turn.
        assert (row["attempts"], row["passed"], row["repaired_in_1"]) == (1, 1, 1), tool
        assert row["identical_retry"] == (1 if fault == "http_500" else 0), (tool, fault)


REAL_CALL_S = 300.0
"""One model call of a small model on a 2-core CPU (llama.cpp's server): tens of seconds, the
tool schemas' prompt included; generous, since a timeout here is not what the test checks."""
REAL_ATTEMPT_S = 1800.0
"""One attempt: up to `max_turns` (8) model calls and a simulated user's."""


def _real_model() -> ModelConfig:
    key = os.environ.get(MODEL_KEY_ENV)
    # Whole (non-streamed) calls are bounded by timeout_s only; first_byte_timeout_s is for
    # streams, which the model agent does not use.
    return ModelConfig(
        name="booking-model",
        model=os.environ.get(MODEL_NAME_ENV) or "qwen2.5-7b-instruct",
        base_url=os.environ[MODEL_URL_ENV],
        api_key_env=MODEL_KEY_ENV if key else None,
        price=Price(input_per_mtok=0, output_per_mtok=0),
        timeout_s=REAL_CALL_S,
        max_retries=1,
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get(MODEL_URL_ENV),
    reason=(
        f"no real model: set {MODEL_URL_ENV} to an OpenAI-compatible base URL (e.g. "
        f"http://127.0.0.1:8000/v1), and {MODEL_NAME_ENV} / {MODEL_KEY_ENV} when needed, to "
        "run the booking example against it"
    ),
)
# Every case of the three suites against a CPU model: far past pytest-timeout's 120 s default.
@pytest.mark.timeout(4 * 3600)
async def test_the_example_suites_run_end_to_end_against_a_real_model(tmp_path: Path) -> None:
    config = example_project(tmp_path, _real_model())
    config = config.model_copy(
        update={"run": config.run.model_copy(update={"timeout_s": REAL_ATTEMPT_S})}
    )
    for suite in SUITES:
        done = await run_suite(config, suite, tmp_path)
        report = done.report
        # A real model may fail the cases (a tool call written as text is a FAIL,
        # malformed_tool_call); what must hold is that the loop ran: every case has its
        # attempts, each called the model, and none ended in Seatrial's own failure.
        assert report.summary.cases == len(report.cases) > 0, suite
        for case in report.cases:
            for attempt in case.attempts:
                where = f"{suite}/{case.case_id}: {attempt.reason}"
                assert attempt.metrics.model_calls >= 1, where
                assert attempt.verdict != "ERROR" or attempt.failure_type in (
                    "limit_exceeded",
                    "simulator",
                ), where
        for drift in report.version_drift:
            print(drift.line())  # the served version is worth seeing, not a failure
