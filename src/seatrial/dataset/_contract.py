"""Tool-contract tests: the standard fault cases of a tool schema, and the recovery table.

:func:`contract_suite` writes one case per tool and fault: a user message that asks for the
tool (its description and example values of its required parameters), the fault injected at
the tool's first call, and the assertions ``tool_called``, ``repairs_within: {turns: 2}`` and
``no_identical_retry``. :func:`recovery_table` reads the run's traces back into the table
``seatrial contract`` prints: per tool and fault, how many attempts passed (what the gate
counts), repaired the call in one model turn, in two, repaired it and then ended in an error,
did not repair it, never met the fault, and how many retried the identical call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, get_args

from seatrial.assertion import recoveries
from seatrial.case import Case, FaultKind, Gate, Suite
from seatrial.compare import GateResult
from seatrial.i18n import gettext as _
from seatrial.i18n import pgettext
from seatrial.record import AttemptRecord, CaseResult

FAULTS: tuple[str, ...] = get_args(FaultKind)
"""Every fault kind, in the order the table shows them."""

REPAIR_TURNS = 2
"""The model turns a generated case allows for the repair."""


def contract_result(**arguments: Any) -> dict[str, Any]:
    """What a tool without an implementation of its own answers in a contract run: a plain
    success echoing the arguments (the faults are what is tested, not the tool)."""
    return {"status": "ok", "arguments": arguments}


def _parameters(tool: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    function = tool.get("function", tool)
    parameters = function.get("parameters") or {}
    raw = parameters.get("properties") or {}
    properties = {str(k): dict(v) if isinstance(v, Mapping) else {} for k, v in raw.items()}
    required = [str(p) for p in parameters.get("required") or [] if str(p) in properties]
    return properties, required


def _example(name: str, schema: Mapping[str, Any]) -> Any:
    """A plausible value for a parameter, from its schema (enum, type, format, name)."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if kind == "integer":
        return int(schema.get("minimum", 2))
    if kind == "number":
        return float(schema.get("minimum", 2))
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    text = f"{name} {schema.get('format', '')}".lower()
    if "date-time" in text or "datetime" in text:
        return "2026-12-01T10:00:00"
    if "date" in text:
        return "2026-12-01"
    if "time" in text:
        return "10:00"
    if "email" in text:
        return "user@example.com"
    if "phone" in text:
        return "13800000000"
    if text.split()[0].endswith("id"):
        return "A1001"
    return "example"


def tool_message(tool: Mapping[str, Any]) -> str:
    """A user message that makes a model call ``tool``: what it does, and example values of
    its required parameters (every parameter when none is required)."""
    function = tool.get("function", tool)
    name = str(function["name"])
    description = str(function.get("description") or "").strip().rstrip(".")
    properties, required = _parameters(tool)
    shown = required or list(properties)
    values = ", ".join(
        f"{p} = {json.dumps(_example(p, properties[p]), ensure_ascii=False)}" for p in shown
    )
    ask = f"Please use `{name}`" + (f" ({description})" if description else "")
    return ask + (f" with {values}." if values else ".")


def applicable_faults(tool: Mapping[str, Any], faults: Iterable[str]) -> list[str]:
    """The faults that make sense for ``tool``: ``missing_param`` needs a parameter,
    ``bad_enum`` a parameter with an ``enum`` of two values or more."""
    properties, _required = _parameters(tool)
    # An enum of one value has no other value for the model to pick.
    has_enum = any(
        isinstance(s.get("enum"), list) and len(s["enum"]) > 1 for s in properties.values()
    )
    kept = []
    for fault in faults:
        if fault == "missing_param" and not properties:
            continue
        if fault == "bad_enum" and not has_enum:
            continue
        kept.append(fault)
    return kept


def case_id(tool: str, fault: str) -> str:
    """``book_table.http_500``: the generated case of one tool and fault."""
    return f"{tool}.{fault}"


def contract_suite(
    tools: Sequence[Mapping[str, Any]],
    *,
    name: str,
    faults: Sequence[str] = FAULTS,
    min_pass_rate: float = 0.8,
) -> Suite:
    """One case per tool and applicable fault (the fault at the tool's first call), gated
    by ``min_pass_rate`` over all attempts."""
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        raise ValueError(f"unknown fault {', '.join(unknown)}; faults: {', '.join(FAULTS)}")
    cases = []
    for tool in tools:
        function = tool.get("function", tool)
        tool_name = str(function["name"])
        for fault in applicable_faults(tool, faults):
            written = {
                "id": case_id(tool_name, fault),
                "name": f"{tool_name} repairs after {fault}",
                "category": tool_name,
                "tags": ["contract", fault],
                "input": tool_message(tool),
                "tool_faults": [{"tool": tool_name, "fault": fault, "at_call": 1}],
                "assertions": [
                    {"type": "tool_called", "expected": tool_name},
                    {"type": "repairs_within", "turns": REPAIR_TURNS},
                    {"type": "no_identical_retry"},
                ],
            }
            cases.append(Case.model_validate(written))
    return Suite(name=name, cases=cases, gate=Gate(min_pass_rate=min_pass_rate))


@dataclass
class RecoveryRow:
    """The recovery of one tool from one fault over the repeats. Each attempt is counted in
    exactly one of ``repaired_in_1``, ``repaired_in_2``, ``repaired_then_error``,
    ``not_repaired`` and ``not_called``."""

    tool: str
    fault: str
    attempts: int = 0
    passed: int = 0
    """Attempts that passed every check (what the gate counts)."""
    repaired_in_1: int = 0
    repaired_in_2: int = 0
    repaired_then_error: int = 0
    """Repaired within two model turns, then the attempt ended in ERROR (a loop to
    ``max_turns``, a timeout)."""
    not_repaired: int = 0
    """Repaired later than two model turns, or never."""
    not_called: int = 0
    """The fault never fired: the tool was never called (or the agent failed first)."""
    identical_retry: int = 0
    """Attempts whose next call after the fault repeated the identical arguments."""

    @property
    def pass_rate(self) -> float:
        """Share of attempts that passed."""
        return self.passed / self.attempts if self.attempts else 0.0

    @property
    def recovery_rate(self) -> float:
        """Share of attempts repaired within two model turns (an error after the repair
        included)."""
        repaired = self.repaired_in_1 + self.repaired_in_2 + self.repaired_then_error
        return repaired / self.attempts if self.attempts else 0.0


@dataclass
class RecoveryTable:
    """The recovery table of a contract run, with the run's gate."""

    run_id: str
    rows: list[RecoveryRow] = field(default_factory=list)
    min_pass_rate: float | None = None
    """The gate's share of attempts that must pass."""
    gate_met: bool | None = None
    """The run's gate verdict (None when not given)."""
    gate_reasons: list[str] = field(default_factory=list)
    """Each unmet gate, with its figure."""

    @property
    def attempts(self) -> int:
        """Attempts of every row."""
        return sum(r.attempts for r in self.rows)

    @property
    def passed(self) -> int:
        """Attempts that passed, of every row."""
        return sum(r.passed for r in self.rows)

    @property
    def pass_rate(self) -> float:
        """Share of all attempts that passed: the figure the gate compares."""
        return self.passed / self.attempts if self.attempts else 0.0

    @property
    def recovery_rate(self) -> float:
        """Share of all attempts repaired within two model turns."""
        repaired = sum(r.recovery_rate * r.attempts for r in self.rows)
        return repaired / self.attempts if self.attempts else 0.0


def _count(row: RecoveryRow, attempt: AttemptRecord) -> None:
    row.attempts += 1
    row.passed += attempt.verdict == "PASS"
    trace = attempt.trace
    found = [
        r
        for r in (recoveries(trace) if trace is not None else [])
        if r.tool == row.tool and r.fault
    ]
    if not found:
        row.not_called += 1
        return
    first = found[0]
    after = first.repaired_after
    if first.identical_retry:
        row.identical_retry += 1
    if after is None or after > REPAIR_TURNS:
        row.not_repaired += 1
    elif attempt.verdict == "ERROR":
        row.repaired_then_error += 1
    elif after <= 1:
        row.repaired_in_1 += 1
    else:
        row.repaired_in_2 += 1


def recovery_table(
    run_id: str,
    cases: Iterable[CaseResult],
    suite: Suite,
    gate: GateResult | None = None,
) -> RecoveryTable:
    """The table of a contract run, from its attempts' traces (read with traces), with the
    run's gate verdict when given."""
    by_id = {case.id: case for case in suite.cases}
    table = RecoveryTable(
        run_id,
        min_pass_rate=suite.gate.min_pass_rate if suite.gate is not None else None,
        gate_met=gate.passed if gate is not None else None,
        gate_reasons=list(gate.reasons) if gate is not None else [],
    )
    for result in cases:
        case = by_id.get(result.case_id)
        if case is None or not case.tool_faults:
            continue
        fault = case.tool_faults[0]
        row = RecoveryRow(fault.tool, fault.fault)
        for attempt in result.attempts:
            _count(row, attempt)
        table.rows.append(row)
    return table


def _headers() -> list[str]:
    """The table's columns in the reader's language."""
    return [
        pgettext("recovery column", "tool"),
        pgettext("recovery column", "fault"),
        pgettext("recovery column", "attempts"),
        pgettext("recovery column", "passed"),
        pgettext("recovery column", "repaired in 1"),
        pgettext("recovery column", "in 2"),
        pgettext("recovery column", "repaired, then error"),
        pgettext("recovery column", "not repaired"),
        pgettext("recovery column", "not called"),
        pgettext("recovery column", "identical retry"),
    ]


def _width(text: str) -> int:
    """Terminal cells ``text`` takes (a Chinese character takes two)."""
    from rich.cells import cell_len

    return cell_len(text)


def _padded(text: str, width: int) -> str:
    return text + " " * max(width - _width(text), 0)


def _percent(count: int, total: int) -> str:
    return f"{count} ({count / total:.0%})" if total else "0"


def _cells(row: RecoveryRow) -> list[str]:
    total = row.attempts
    return [
        row.tool,
        row.fault,
        str(total),
        _percent(row.passed, total),
        _percent(row.repaired_in_1, total),
        _percent(row.repaired_in_2, total),
        _percent(row.repaired_then_error, total),
        _percent(row.not_repaired, total),
        _percent(row.not_called, total),
        _percent(row.identical_retry, total),
    ]


def headline(table: RecoveryTable) -> str:
    """The figure the gate uses, and its verdict: ``passed 9 of 29 attempts (31%): gate NOT
    met (needs at least 80%)``."""
    line = _("passed {passed} of {attempts} attempts ({share})").format(
        passed=table.passed, attempts=table.attempts, share=format(table.pass_rate, ".0%")
    )
    if table.gate_met is None:
        return line
    verdict = _("{line}: gate met") if table.gate_met else _("{line}: gate NOT met")
    line = verdict.format(line=line)
    if table.min_pass_rate:
        line = _("{line} (needs at least {share})").format(
            line=line, share=format(table.min_pass_rate, ".0%")
        )
    return line


def render_recovery_table(table: RecoveryTable, form: str = "text") -> str:
    """The table as aligned text (``text``), GitHub Markdown (``md``) or JSON (``json``)."""
    if form == "json":
        rows = [
            {
                **asdict(r),
                "pass_rate": round(r.pass_rate, 4),
                "recovery_rate": round(r.recovery_rate, 4),
            }
            for r in table.rows
        ]
        data = {
            "run_id": table.run_id,
            "attempts": table.attempts,
            "passed": table.passed,
            "pass_rate": round(table.pass_rate, 4),
            "gate": {
                "met": table.gate_met,
                "min_pass_rate": table.min_pass_rate,
                "reasons": table.gate_reasons,
            },
            "recovery_rate": round(table.recovery_rate, 4),
        }
        return json.dumps({**data, "rows": rows}, ensure_ascii=False, indent=2)
    lines = [_cells(row) for row in table.rows]
    headers = _headers()
    summary = [
        headline(table),
        _(
            "repaired within {turns} model turns: {share} of attempts (a repair alone does not "
            "pass: every check must)"
        ).format(turns=REPAIR_TURNS, share=format(table.recovery_rate, ".0%")),
    ]
    if form == "md":
        out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        out += ["| " + " | ".join(cells) + " |" for cells in lines]
        title = _("### Tool contract: run {run_id}").format(run_id=table.run_id)
        return "\n".join([title, "", *out, "", *summary])
    widths = [max([_width(h), *(_width(c[i]) for c in lines)]) for i, h in enumerate(headers)]
    out = ["  ".join(_padded(h, w) for h, w in zip(headers, widths, strict=True))]
    out += ["  ".join(_padded(c, w) for c, w in zip(cells, widths, strict=True)) for cells in lines]
    return "\n".join([*(line.rstrip() for line in out), *summary])
