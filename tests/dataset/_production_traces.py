"""Production traces as an agent's OTel SDK exports them (OTLP/JSON), for the tests of cases
from traces, the traces browser and ``seatrial traces``.

The support session holds a mainland mobile number, an ID card number whose check character
is right and a bank card number that passes Luhn, in the user's message (written with spaces,
as people type them) and in the tools' arguments and results (written plainly).
"""

from __future__ import annotations

import json
from typing import Any

PHONE = "13812345678"
ID_CARD = "11010519491231002X"
BANK_CARD = "6222021234567890128"
ORDER = "ORD20240701"

RAW_SPELLINGS = (
    PHONE,
    "138 1234 5678",
    "138-1234-5678",
    ID_CARD,
    ID_CARD.lower(),
    "110105 19491231 002X",
    BANK_CARD,
    "6222 0212 3456 7890 128",
    "6222-0212-3456-7890-128",
)
"""Every way the three raw values may be spelt: none may be stored, logged or echoed."""

USER_MESSAGE = (
    f"订单 {ORDER} 要退款。我的手机 138 1234 5678，身份证 {ID_CARD}，"
    "退到银行卡 6222 0212 3456 7890 128。"
)
SUPPORT_TRACE_ID = "5b8efff798038103d269b633813fc60c"
START_NS = 1_780_000_000_000_000_000
MS = 1_000_000


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    """OTLP/JSON key-value attributes."""
    return [{"key": key, "value": _value(value)} for key, value in values.items()]


def span(
    trace_id: str,
    span_id: str,
    name: str,
    start_ms: int,
    end_ms: int,
    values: dict[str, Any],
    *,
    parent: str | None = None,
    error: bool = False,
) -> dict[str, Any]:
    """One OTLP/JSON span; ids are short hex labels (``a1``), written as 16 hex digits."""
    found: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id.rjust(16, "0"),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(START_NS + start_ms * MS),
        "endTimeUnixNano": str(START_NS + end_ms * MS),
        "attributes": attributes(values),
        "status": {"code": 2, "message": "tool failed"} if error else {"code": 1},
    }
    if parent is not None:
        found["parentSpanId"] = parent.rjust(16, "0")
    return found


def chat(trace_id: str, span_id: str, start_ms: int, user: str, reply: str | None = None) -> Any:
    """A model call whose input holds the user's message (GenAI ``gen_ai.input.messages``)."""
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": "You are a support agent"}]},
        {"role": "user", "parts": [{"type": "text", "content": user}]},
    ]
    values: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 420,
        "gen_ai.usage.output_tokens": 60,
        "gen_ai.input.messages": json.dumps(messages, ensure_ascii=False),
    }
    if reply is not None:
        output = [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}]
        values["gen_ai.output.messages"] = json.dumps(output, ensure_ascii=False)
    return span(trace_id, span_id, "chat gpt-4o", start_ms, start_ms + 200, values, parent="a1")


def tool(
    trace_id: str,
    span_id: str,
    start_ms: int,
    name: str,
    arguments: dict[str, Any],
    result: Any,
    *,
    error: bool = False,
) -> dict[str, Any]:
    """A tool call with its JSON arguments and result."""
    values: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": f"call_{span_id}",
        "gen_ai.tool.call.arguments": json.dumps(arguments, ensure_ascii=False),
        "gen_ai.tool.call.result": json.dumps(result, ensure_ascii=False),
    }
    if error:
        values["error.type"] = "tool_error"
    name_ = f"execute_tool {name}"
    return span(trace_id, span_id, name_, start_ms, start_ms + 50, values, parent="a1", error=error)


def agent(trace_id: str, spans: list[dict[str, Any]], service: str = "support-bot") -> Any:
    """One resource's spans under an ``invoke_agent`` root (span id ``a1``)."""
    root = span(
        trace_id,
        "a1",
        f"invoke_agent {service}",
        0,
        1_000,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": service},
    )
    return {
        "resource": {"attributes": attributes({"service.name": service})},
        "scopeSpans": [{"scope": {"name": "agent"}, "spans": [root, *spans]}],
    }


def support_session(trace_id: str = SUPPORT_TRACE_ID) -> dict[str, Any]:
    """The refund session: a look-up and a refund, personal data everywhere."""
    return agent(
        trace_id,
        [
            chat(trace_id, "c1", 10, USER_MESSAGE),
            tool(
                trace_id,
                "b1",
                300,
                "search_order",
                {"order_id": ORDER, "phone": PHONE},
                {"order_id": ORDER, "status": "paid", "holder_id": ID_CARD},
            ),
            tool(
                trace_id,
                "b2",
                400,
                "refund",
                {"order_id": ORDER, "card_no": BANK_CARD},
                {"refund_id": "RF20240702001", "status": "accepted"},
            ),
            chat(trace_id, "c2", 600, USER_MESSAGE, reply=f"已退款到银行卡 {BANK_CARD}"),
        ],
    )


def export(*resources: dict[str, Any]) -> dict[str, Any]:
    """An OTLP/JSON export (``ExportTraceServiceRequest``) of these resources' spans."""
    return {"resourceSpans": list(resources)}
