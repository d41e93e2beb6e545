"""Recorded sessions evaluate with no agent, and OTLP and tools_called forms agree."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from seatrial import run_suite

SUITE = """
suite: recorded
cases:
  - id: refund
    input: I want a refund for order 1001
    allowed_tools: [search_order, refund_order]
    permissions: {refund_order: once}
    assertions:
      - {type: tool_sequence, expected: [search_order, refund_order]}
      - {type: tool_params, tool: refund_order, expected: {order_id: "1001"}}
      - {type: no_loop}
      - {type: contains, value: refunded}
  - id: looping
    input: where is order 2002
    assertions:
      - {type: tool_called, expected: search_order}
      - {type: no_loop, max_repeats: 1}
  - id: over-grant
    input: refund orders 1 and 2
    permissions: {refund_order: once}
    assertions:
      - {type: tool_called, expected: refund_order}
"""

SESSIONS = {
    "refund": (
        "Your order 1001 has been refunded.",
        [
            ("search_order", {"order_id": "1001"}, {"status": "delivered"}, True),
            ("refund_order", {"order_id": "1001"}, {"ok": True}, True),
        ],
    ),
    "looping": (
        "Sorry, I could not find it.",
        [("search_order", {"order_id": "2002"}, {"error": "timeout"}, False)] * 3,
    ),
    "over-grant": (
        "Both refunded.",
        [
            ("refund_order", {"order_id": "1"}, {"ok": True}, True),
            ("refund_order", {"order_id": "2"}, {"ok": True}, True),
        ],
    ),
}


def _any_value(value: object) -> dict[str, object]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def _otlp(case_id: str, calls: list[tuple[str, dict, dict, bool]]) -> dict[str, object]:
    trace_id = hashlib.md5(case_id.encode()).hexdigest()
    start = 1_700_000_000_000_000_000
    spans = [
        {
            "traceId": trace_id,
            "spanId": "a" * 16,
            "name": "invoke_agent support",
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 10_000_000 * (len(calls) + 1)),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": _any_value("invoke_agent")},
                {"key": "gen_ai.agent.name", "value": _any_value("support")},
            ],
            "status": {"code": 1},
        }
    ]
    for i, (name, arguments, result, ok) in enumerate(calls):
        attributes = [
            {"key": "gen_ai.operation.name", "value": _any_value("execute_tool")},
            {"key": "gen_ai.tool.name", "value": _any_value(name)},
            {"key": "gen_ai.tool.call.id", "value": _any_value(f"call_{i}")},
            {"key": "gen_ai.tool.call.arguments", "value": _any_value(json.dumps(arguments))},
            {"key": "gen_ai.tool.call.result", "value": _any_value(json.dumps(result))},
        ]
        if not ok:
            attributes.append({"key": "error.type", "value": _any_value("tool_error")})
        spans.append(
            {
                "traceId": trace_id,
                "spanId": f"{i + 1:016x}",
                "parentSpanId": "a" * 16,
                "name": f"execute_tool {name}",
                "startTimeUnixNano": str(start + 10_000_000 * i),
                "endTimeUnixNano": str(start + 10_000_000 * (i + 1)),
                "attributes": attributes,
                "status": {"code": 1 if ok else 2},
            }
        )
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}


def _write_sessions(path: Path, form: str) -> None:
    with path.open("w", encoding="utf-8") as out:
        for case_id, (response, calls) in SESSIONS.items():
            session: dict[str, object] = {"case_id": case_id, "response": response}
            if form == "otlp":
                session["otlp"] = _otlp(case_id, calls)
            else:
                session["tools_called"] = [
                    {"name": n, "input": a, "output": r, "latency_ms": 10, "success": ok}
                    for n, a, r, ok in calls
                ]
            out.write(json.dumps(session) + "\n")


def test_recorded_sessions_give_the_same_verdicts_in_otlp_and_tools_called_form(tmp_path):
    suite = tmp_path / "recorded.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    verdicts = {}
    for form in ("otlp", "tools_called"):
        sessions = tmp_path / f"{form}.jsonl"
        _write_sessions(sessions, form)
        report = run_suite(suite, f"replay:{sessions}", db=f"sqlite:///{tmp_path / (form + '.db')}")
        verdicts[form] = {
            c.case_id: (
                c.verdict,
                c.attempts[0].failure_type,
                [r.verdict for r in c.attempts[0].assertions],
            )
            for c in report.cases
        }
    assert verdicts["otlp"] == verdicts["tools_called"]
    assert verdicts["otlp"]["refund"][0] == "PASS"
    assert verdicts["otlp"]["looping"][:2] == ("FAIL", "loop")
    assert verdicts["otlp"]["over-grant"][:2] == ("FAIL", "permission_violation")
