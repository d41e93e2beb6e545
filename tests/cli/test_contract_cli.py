"""``seatrial contract``: the standard fault cases of a tool schema, run against a scripted
model through the gateway, and the recovery table showing which faults it repaired."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from seatrial.cli import app
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply, FakeToolCall

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
KEY_ENV = "SEATRIAL_TEST_CONTRACT_KEY"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "book_table",
            "description": "Book a restaurant table.",
            "parameters": {
                "type": "object",
                "properties": {
                    "date": {"type": "string", "format": "date"},
                    "party": {"type": "integer", "minimum": 1},
                    "seating": {"type": "string", "enum": ["indoor", "outdoor"]},
                },
                "required": ["date", "party", "seating"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_tables",
            "description": "List the free tables of a day.",
            "parameters": {
                "type": "object",
                "properties": {"date": {"type": "string"}},
                "required": ["date"],
            },
        },
    },
]
ARGUMENTS = {
    "book_table": {"date": "2026-12-01", "party": 2, "seating": "indoor"},
    "list_tables": {"date": "2026-12-01"},
}
OTHER = {"book_table": "list_tables", "list_tables": "book_table"}


def _fault_of(content: str) -> str:
    try:
        told = json.loads(content)
    except json.JSONDecodeError:
        return "malformed_json"
    if content == "" or told == "":
        return "empty"
    return str(told.get("error_type", "ok")) if isinstance(told, dict) else "ok"


def repairs_some(body: dict[str, Any]) -> FakeReply:
    """A model that sends another date after missing_param and bad_enum (a fix when the date
    was the missing parameter, none for the refused seating), retries the identical call after
    http_500, gives up after timeout, and after malformed_json or empty looks at the other
    tool first, then calls again with other arguments (two turns)."""
    messages = body["messages"]
    user = next(m["content"] for m in messages if m["role"] == "user")
    match = re.search(r"`(\w+)`", user)
    assert match is not None, user
    tool = match.group(1)
    names = {
        call["id"]: call["function"]["name"]
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    }
    history = [(names[m["tool_call_id"]], m["content"]) for m in messages if m["role"] == "tool"]
    if not history:
        return FakeReply(tool_calls=[FakeToolCall(tool, ARGUMENTS[tool])])
    last_name, last = history[-1]
    if last_name == tool and len(history) > 1 and _fault_of(last) == "ok":
        return FakeReply("Done.")
    fault = _fault_of(history[0][1])
    changed = {**ARGUMENTS[tool], "date": "2026-12-02"}
    if fault == "http_500":
        return FakeReply(tool_calls=[FakeToolCall(tool, ARGUMENTS[tool])])
    if fault == "timeout":
        return FakeReply("Sorry, the service is not answering.")
    if fault in ("malformed_json", "empty") and len(history) == 1:
        other = OTHER[tool]
        return FakeReply(tool_calls=[FakeToolCall(other, ARGUMENTS[other])])
    return FakeReply(tool_calls=[FakeToolCall(tool, changed)])


def write_project(root: Path, base_url: str) -> Path:
    tools = root / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    (root / "seatrial.yaml").write_text(
        f"models:\n  waiter:\n    model: waiter-v1\n    base_url: {base_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        # A named agent with one of the schema's two tools.
        "agents:\n  lister:\n    spec: model:waiter\n"
        f"    tools: {json.dumps(TOOLS[1:])}\n"
        "    implementations: {list_tables: 'python:seatrial.dataset:contract_result'}\n",
        encoding="utf-8",
    )
    return tools


def invoke(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(root)
    monkeypatch.setenv(KEY_ENV, "sk-test-contract")
    db = f"sqlite:///{root / 'store.db'}"
    return CliRunner(env={"COLUMNS": "200"}).invoke(app, [*args, "--db", db])


@pytest.mark.slow
def test_the_recovery_table_shows_which_faults_the_model_repaired(tmp_path, monkeypatch):
    faults = "missing_param,bad_enum,http_500,timeout,malformed_json"
    with FakeOpenAI(repairs_some) as upstream:
        write_project(tmp_path, upstream.base_url)
        args = ("contract", "tools.json", "--agent", "model:waiter", "--faults", faults)
        ran = invoke(tmp_path, monkeypatch, *args, "--repeats", "2", "--format", "json")
    assert ran.exit_code == 1, ran.output  # 12 of 18 attempts pass: under the 80% gate
    table = json.loads(ran.stdout)
    rows = {(r["tool"], r["fault"]): r for r in table["rows"]}
    # bad_enum only for the tool with an enum parameter.
    expected = [(t, f) for t in ("book_table", "list_tables") for f in faults.split(",")]
    assert sorted(rows) == sorted(set(expected) - {("list_tables", "bad_enum")})
    assert ("list_tables", "bad_enum") not in rows

    def counts(tool: str, fault: str) -> tuple[int, ...]:
        r = rows[(tool, fault)]
        keys = ("attempts", "repaired_in_1", "repaired_in_2", "not_repaired", "identical_retry")
        return tuple(r[k] for k in keys)

    for tool in ("book_table", "list_tables"):
        assert counts(tool, "missing_param") == (2, 2, 0, 0, 0)
        assert counts(tool, "http_500") == (2, 2, 0, 0, 2)
        assert counts(tool, "timeout") == (2, 0, 0, 2, 0)
        assert counts(tool, "malformed_json") == (2, 0, 2, 0, 0)
    # Another date is no repair of a refused seating, though the call succeeded.
    assert counts("book_table", "bad_enum") == (2, 0, 0, 2, 0)
    assert table["recovery_rate"] == pytest.approx(12 / 18, abs=1e-4)
    assert (table["passed"], table["attempts"]) == (12, 18)
    assert table["pass_rate"] == pytest.approx(12 / 18, abs=1e-4)
    assert table["gate"]["met"] is False
    assert rows[("book_table", "timeout")]["recovery_rate"] == 0.0

    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store:
        [run] = store.list_runs()
        attempts = store.attempts(run.run_id)
    assert run.run_id == table["run_id"]
    verdicts = {(a.case_id, a.verdict, a.failure_type) for a in attempts}
    assert ("book_table.http_500", "PASS", None) in verdicts
    assert ("book_table.bad_enum", "FAIL", "recovery") in verdicts
    assert ("book_table.timeout", "FAIL", "recovery") in verdicts
    assert ("list_tables.malformed_json", "PASS", None) in verdicts


def test_markdown_table_and_the_gate_on_a_smaller_contract(tmp_path, monkeypatch):
    with FakeOpenAI(repairs_some) as upstream:
        write_project(tmp_path, upstream.base_url)
        args = ("contract", "tools.json", "--agent", "model:waiter", "--faults", "bad_enum,timeout")
        strict = invoke(tmp_path, monkeypatch, *args, "--format", "md")
        lenient = invoke(tmp_path, monkeypatch, *args, "--min-pass-rate", "0.3")
        args = ("contract", "tools.json", "--agent", "model:waiter", "--faults", "http_500")
        met = invoke(tmp_path, monkeypatch, *args, "--min-pass-rate", "0.3")
    assert strict.exit_code == 1, strict.output
    lines = strict.stdout.splitlines()
    nothing = "0 (0%) | 0 (0%) | 0 (0%) | 1 (100%) | 0 (0%) | 0 (0%) |"
    assert f"| book_table | bad_enum | 1 | 0 (0%) | {nothing}" in lines
    assert f"| book_table | timeout | 1 | 0 (0%) | {nothing}" in lines
    assert f"| list_tables | timeout | 1 | 0 (0%) | {nothing}" in lines
    # The headline is the gate's figure; the repair rate comes second, named as such.
    assert lines[-2:] == [
        "passed 0 of 3 attempts (0%): gate NOT met (needs at least 80%)",
        "repaired within 2 model turns: 0% of attempts (a repair alone does not pass: every "
        "check must)",
    ]
    assert "gate: suite min_pass_rate" in strict.stderr
    assert lenient.exit_code == 1, lenient.output  # nothing passed: 0% is under 30% too
    assert met.exit_code == 0, met.output
    assert "passed 2 of 2 attempts (100%): gate met (needs at least 80%)" not in met.stdout
    assert "passed 2 of 2 attempts (100%): gate met (needs at least 30%)" in met.stdout


def test_bad_input_exits_2_with_the_fix(tmp_path, monkeypatch):
    with FakeOpenAI(repairs_some) as upstream:
        write_project(tmp_path, upstream.base_url)
        (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
        bad_fault = invoke(
            tmp_path,
            monkeypatch,
            "contract",
            "tools.json",
            "--agent",
            "model:waiter",
            "--faults",
            "http_404",
        )
        bad_file = invoke(
            tmp_path, monkeypatch, "contract", "broken.json", "--agent", "model:waiter"
        )
        no_model = invoke(tmp_path, monkeypatch, "contract", "tools.json", "--agent", "model:cook")
        partial = invoke(tmp_path, monkeypatch, "contract", "tools.json", "--agent", "lister")
        assert upstream.requests == []
    assert partial.exit_code == 2, partial.output
    assert "agent `lister` has no tool book_table of tools.json" in partial.output
    assert bad_fault.exit_code == 2
    assert "--faults: unknown fault http_404; give a comma-separated list of:" in bad_fault.output
    assert bad_file.exit_code == 2, bad_file.output
    assert "broken.json" in bad_file.output
    assert no_model.exit_code == 2
    assert "no model `cook` under `models:`" in no_model.output


@pytest.mark.slow
def test_a_real_seatrial_process_prints_the_table(tmp_path):
    with FakeOpenAI(repairs_some) as upstream:
        write_project(tmp_path, upstream.base_url)
        done = subprocess.run(
            [
                SEATRIAL,
                "contract",
                "tools.json",
                "--agent",
                "model:waiter",
                "--faults",
                "missing_param",
                "--db",
                f"sqlite:///{tmp_path / 'store.db'}",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, KEY_ENV: "sk-test-contract", "COLUMNS": "200"},
        )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [
        line.split() for line in done.stdout.splitlines() if re.match(r"\w+ +missing_param ", line)
    ]
    assert ["book_table", "missing_param", "1", "1", "(100%)", "1", "(100%)"] == rows[0][:7]
    assert ["list_tables", "missing_param", "1", "1", "(100%)", "1", "(100%)"] == rows[1][:7]
    assert "passed 2 of 2 attempts (100%): gate met (needs at least 80%)" in done.stdout


EXAMPLE_TOOLS = Path(__file__).parents[2] / "examples" / "booking" / "tools" / "booking_tools.json"


MISSING = re.compile(r"missing required parameter `(\w+)`")
ALLOWED = re.compile(r"`(\w+)`[^`]*?; allowed values: (.*?); call")
VALIDATION = ("missing_param", "bad_enum")
TRANSIENT = ("http_500", "timeout", "malformed_json", "empty")


def _error_of(content: str) -> str:
    """The error message of a tool result (``{"error": ...}``); empty for any other result."""
    try:
        told = json.loads(content)
    except json.JSONDecodeError:
        return ""
    return str(told.get("error", "")) if isinstance(told, dict) else ""


def _asked(messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The tool and the values ``seatrial contract``'s user message asks for."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    match = re.match(r"Please use `(\w+)`.* with (.*)\.$", user)
    assert match is not None, user
    given = {
        key: json.loads(value)
        for key, value in re.findall(r"(\w+) = (\"[^\"]*\"|[^,]+)", match.group(2))
    }
    return match.group(1), given


def _last_call(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The arguments of the model's last tool call, as its conversation shows them."""
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    return dict(json.loads(calls[-1]["function"]["arguments"]))


def _contract_model(obeys: bool):
    """A model that calls the tool the user names with the values given, then after a fault:
    when ``obeys``, does what the error says (sets the missing parameter from the user's
    values, picks an allowed value, sends the same call again after anything else); when
    not, sends the identical call again whatever the error said."""

    def answer(body: dict[str, Any]) -> FakeReply:
        messages = body["messages"]
        tool, given = _asked(messages)
        told = [m["content"] for m in messages if m["role"] == "tool"]
        if not told:
            return FakeReply(tool_calls=[FakeToolCall(tool, given)])
        if _fault_of(told[-1]) == "ok":
            return FakeReply("完成。")
        last = _last_call(messages)
        error = _error_of(told[-1])
        missing, allowed = MISSING.search(error), ALLOWED.search(error)
        if obeys and missing is not None:
            last[missing.group(1)] = given[missing.group(1)]
        elif obeys and allowed is not None:
            last[allowed.group(1)] = json.loads(allowed.group(2).split(", ")[0])
        return FakeReply(tool_calls=[FakeToolCall(tool, last)])

    return answer


def example_rows(schemas: list[dict[str, Any]], fault: str) -> set[tuple[str, str]]:
    rows = set()
    for schema in schemas:
        function = schema["function"]
        enums = any("enum" in p for p in function["parameters"]["properties"].values())
        if fault != "bad_enum" or enums:
            rows.add((function["name"], fault))
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("fault", [*VALIDATION, *TRANSIENT])
def test_on_the_booking_schema_a_model_that_obeys_each_fault_passes_every_row(
    tmp_path, monkeypatch, fault
):
    schemas = json.loads(EXAMPLE_TOOLS.read_text(encoding="utf-8"))
    with FakeOpenAI(_contract_model(obeys=True)) as upstream:
        write_project(tmp_path, upstream.base_url)
        ran = invoke(
            tmp_path,
            monkeypatch,
            *("contract", str(EXAMPLE_TOOLS), "--agent", "model:waiter", "--faults", fault),
            *("--format", "json"),
        )
    assert ran.exit_code == 0, ran.output
    table = json.loads(ran.stdout)
    rows = {(r["tool"], r["fault"]): r for r in table["rows"]}
    assert set(rows) == example_rows(schemas, fault)
    for key, row in rows.items():
        assert (row["attempts"], row["passed"], row["repaired_in_1"]) == (1, 1, 1), (key, row)
        # After a transient fault the right repair is the same call again.
        assert row["identical_retry"] == (1 if fault in TRANSIENT else 0), (key, row)
    assert (table["passed"], table["attempts"], table["pass_rate"]) == (len(rows), len(rows), 1.0)
    assert table["gate"] == {"met": True, "min_pass_rate": 0.8, "reasons": []}


@pytest.mark.slow
@pytest.mark.parametrize("fault", [*VALIDATION, *TRANSIENT])
def test_on_the_booking_schema_a_model_that_resends_blindly_fails_only_after_validation_errors(
    tmp_path, monkeypatch, fault
):
    with FakeOpenAI(_contract_model(obeys=False)) as upstream:
        write_project(tmp_path, upstream.base_url)
        ran = invoke(
            tmp_path,
            monkeypatch,
            *("contract", str(EXAMPLE_TOOLS), "--agent", "model:waiter", "--faults", fault),
            *("--format", "json"),
        )
    table = json.loads(ran.stdout)
    if fault in TRANSIENT:
        assert ran.exit_code == 0, ran.output
        assert table["pass_rate"] == 1.0
        assert table["gate"]["met"] is True
        return
    assert ran.exit_code == 1, ran.output
    for row in table["rows"]:
        # The identical resend is neither a repair nor allowed.
        assert (row["passed"], row["identical_retry"], row["not_repaired"]) == (0, 1, 1), row
    assert table["pass_rate"] == 0.0
    assert table["gate"]["met"] is False
    assert table["gate"]["min_pass_rate"] == 0.8
    assert [r.split(":")[0] for r in table["gate"]["reasons"]] == ["suite min_pass_rate"]


def repairs_then_loops(body: dict[str, Any]) -> FakeReply:
    """Calls the named tool, sends it again after the fault (a repair, after http_500), then
    keeps calling it until the agent's max_turns ends the attempt."""
    tool, given = _asked(body["messages"])
    return FakeReply(tool_calls=[FakeToolCall(tool, given)])


@pytest.mark.slow
def test_a_repair_followed_by_a_loop_to_max_turns_has_its_own_column(tmp_path, monkeypatch):
    with FakeOpenAI(repairs_then_loops) as upstream:
        write_project(tmp_path, upstream.base_url)
        args = ("contract", str(EXAMPLE_TOOLS), "--agent", "model:waiter", "--faults", "http_500")
        ran = invoke(tmp_path, monkeypatch, *args, "--format", "json")
        text = invoke(tmp_path, monkeypatch, *args)
    assert ran.exit_code == 1, ran.output
    for row in json.loads(ran.stdout)["rows"]:
        assert (row["repaired_then_error"], row["not_called"], row["passed"]) == (1, 0, 0), row
        assert row["repaired_in_1"] == 0
    header = next(x for x in text.stdout.splitlines() if x.startswith("tool "))
    assert "repaired, then error" in header
    line = next(x for x in text.stdout.splitlines() if x.startswith("get_order "))
    assert line.split()[:4] == ["get_order", "http_500", "1", "0"]
