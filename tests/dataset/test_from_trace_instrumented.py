"""Cases from traces the real instrumentation packages wrote: OpenInference (Arize),
OpenLLMetry (traceloop) and the OTel contrib GenAI instrumentation of the ``openai`` client.

Each traces a two-turn conversation in which the agent calls a tool per turn; none of them
traces the tools themselves, so the calls live only in the messages. A case made from the
trace must send each user turn once, propose the tools called, and keep what they answered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from seatrial.case import load_suite
from seatrial.cli import app
from seatrial.dataset import case_from_trace
from seatrial.trace import normalize_trace, traces_from_otlp_protobuf
from tests.dataset._instrumented import (
    CONTENT_ENV,
    FIRST_TURN,
    INSTRUMENTATIONS,
    LOOKUP,
    LOOKUP_RESULT,
    REFUND,
    REFUND_RESULT,
    SECOND_TURN,
    SERVICE,
    otlp_json,
    otlp_protobuf,
    record_conversation,
)

pytestmark = pytest.mark.parametrize("instrumentation", sorted(INSTRUMENTATIONS))


@pytest.fixture(autouse=True)
def _record_content(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in CONTENT_ENV.items():
        monkeypatch.setenv(key, value)


def _cli(*args: str) -> Any:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_a_case_from_an_instrumented_export_sends_each_user_turn_once_and_proposes_its_tools(
    instrumentation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "spans.json"
    export.write_text(json.dumps(otlp_json(record_conversation(instrumentation))))
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'store.db'}"
    _cli("cases", "from-trace", "--file", str(export), "--out", "made.yaml", "--db", db)

    suite = load_suite(tmp_path / "made.yaml")
    (case,) = suite.cases
    assert case.user_turns == [FIRST_TURN, SECOND_TURN]
    called = next(a for a in case.assertions if a.type == "tool_called")
    assert called.params["expected"] == ["lookup_order", "issue_refund"]
    recorded = case.metadata["recorded_tool_results"]
    assert [(r["tool"], r["arguments"], r["result"]) for r in recorded] == [
        ("lookup_order", LOOKUP, LOOKUP_RESULT),
        ("issue_refund", REFUND, REFUND_RESULT),
    ]
    # The suite fails its run when the case fails (docs/ingestion.md).
    assert suite.gate.min_pass_rate == 1.0

    listed = json.loads(_cli("traces", "list", "--format", "json", "--db", db).stdout)
    (head,) = listed
    assert (head["service"], head["tools"]) == (SERVICE, ["lookup_order", "issue_refund"])
    assert head["input_tokens"] > 0 and head["output_tokens"] > 0


def test_the_receiver_path_reads_the_same_calls_from_the_sdk_protobuf_export(
    instrumentation: str,
) -> None:
    (trace,) = traces_from_otlp_protobuf(otlp_protobuf(record_conversation(instrumentation)))
    trace = normalize_trace(trace)
    calls = trace.tool_calls()
    assert [(c.name, c.arguments, c.result) for c in calls] == [
        ("lookup_order", LOOKUP, LOOKUP_RESULT),
        ("issue_refund", REFUND, REFUND_RESULT),
    ]
    assert [c.span.attributes["gen_ai.tool.call.id"] for c in calls] == [
        "call_lookup",
        "call_refund",
    ]
    # Normalizing again finds every call already has its span.
    assert normalize_trace(trace) is trace
    assert case_from_trace(trace).case.user_turns == [FIRST_TURN, SECOND_TURN]
