"""``seatrial cases from-trace --file``: a production trace export becomes a masked, runnable
case in one command, and no raw personal value reaches the database, the logs, the case file,
the agent, the reports or an error message."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from seatrial.case import load_suite
from seatrial.cli import app
from seatrial.dataset import Masker, ingest_traces
from seatrial.store import Store
from seatrial.testing import AgentServer
from seatrial.trace import read_trace_file
from tests.dataset._production_traces import (
    ORDER,
    RAW_SPELLINGS,
    SUPPORT_TRACE_ID,
    export,
    support_session,
)

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
TOKEN = re.compile(r"<[A-Z_]+_\d+>")


def invoke(*args: str) -> Result:
    """The command in this process, so its logs reach caplog."""
    return CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))


def seatrial(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: a process of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("SEATRIAL_DB_URL", "SEATRIAL_TOKEN")}
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "COLUMNS": "200"},
    )


def refunding_agent(request: dict[str, Any]) -> dict[str, Any]:
    """Does what the production agent did, with the (masked) values it was given."""
    message = request["message"]
    order = re.search(r"ORD\d+", message)
    tokens = TOKEN.findall(message)
    phone = next(t for t in tokens if t.startswith("<PHONE"))
    card = next(t for t in tokens if t.startswith("<BANK_CARD"))
    assert order is not None
    return {
        "response": f"已为订单 {order.group()} 退款到 {card}",
        "tools_called": [
            {"name": "search_order", "input": {"order_id": order.group(), "phone": phone}},
            {"name": "refund", "input": {"order_id": order.group(), "card_no": card}},
        ],
    }


def lookup_only_agent(request: dict[str, Any]) -> dict[str, Any]:
    """Looks the order up and never refunds it."""
    order = re.search(r"ORD\d+", request["message"])
    assert order is not None
    return {
        "response": "查到了您的订单",
        "tools_called": [{"name": "search_order", "input": {"order_id": order.group()}}],
    }


def leaks(texts: dict[str, str | bytes]) -> list[str]:
    """``where: spelling`` for every raw value found in any text."""
    found = []
    for where, text in texts.items():
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        for spelling in RAW_SPELLINGS:
            if spelling.encode("utf-8") in data:
                found.append(f"{where}: {spelling}")
    return found


def verdicts(report_dir: Path) -> list[tuple[str, str | None]]:
    """Each attempt's verdict and failure type in a run's report.json."""
    report = json.loads((report_dir / "report.json").read_text("utf-8"))
    return [
        (attempt["verdict"], attempt["failure_type"])
        for case in report["cases"]
        for attempt in case["attempts"]
    ]


def database_files(db: Path) -> dict[str, str | bytes]:
    """The SQLite file and its journal files, as raw bytes."""
    return {
        str(path.name): path.read_bytes()
        for path in db.parent.iterdir()
        if path.name.startswith(db.name)
    }


def test_a_production_trace_with_personal_data_becomes_a_masked_runnable_case_in_one_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.chdir(tmp_path)
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(export(support_session()), ensure_ascii=False), "utf-8")
    assert leaks({"the export": exported.read_text("utf-8")}) != []  # the data is there
    db = tmp_path / "store" / "seatrial.db"
    url = f"sqlite:///{db}"

    made = invoke("cases", "from-trace", "--file", str(exported), "--db", url, "--out", "case.yaml")
    assert made.exit_code == 0, made.output
    assert "wrote case.yaml" in made.output

    case = load_suite(tmp_path / "case.yaml").cases[0]
    assert case.input is not None
    assert "<PHONE_1>" in case.input and "<ID_CARD_1>" in case.input
    assert "<BANK_CARD_1>" in case.input and ORDER in case.input
    kept = {spec.id: spec.params for spec in case.assertions}
    assert kept["called-tools"] == {"expected": ["search_order", "refund"]}
    assert kept["params:refund"]["expected"] == {"order_id": ORDER, "card_no": "<BANK_CARD_1>"}
    assert kept["params:search_order"]["expected"] == {"order_id": ORDER, "phone": "<PHONE_1>"}
    with Store.open(url) as store:
        assert store.trace_head(SUPPORT_TRACE_ID).masked  # stored, masked, counted

    with AgentServer(refunding_agent) as good:
        passed = seatrial(
            "run",
            "case.yaml",
            "--agent",
            good.url,
            "--db",
            url,
            "--report-dir",
            "good",
            cwd=tmp_path,
        )
        received = [request.body for request in good.requests]
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert verdicts(tmp_path / "good") == [("PASS", None)]
    with AgentServer(lookup_only_agent) as bad:
        failed = seatrial(
            "run", "case.yaml", "--agent", bad.url, "--db", url, "--report-dir", "bad", cwd=tmp_path
        )
    assert failed.returncode in (0, 1), failed.stdout + failed.stderr  # P1: the gate decides
    assert verdicts(tmp_path / "bad") == [("FAIL", "tool_not_called")]

    outputs: dict[str, str | bytes] = {
        "from-trace output": made.output,
        "logs": caplog.text,
        "the case file": (tmp_path / "case.yaml").read_text("utf-8"),
        "what the agent received": json.dumps(received, ensure_ascii=False),
        "run output": passed.stdout + passed.stderr + failed.stdout + failed.stderr,
    }
    for report in tmp_path.rglob("*"):
        if report.is_file() and report.suffix in (".json", ".html", ".md", ".xml", ".log"):
            if report != exported:
                outputs[str(report.relative_to(tmp_path))] = report.read_bytes()
    stored = database_files(db)
    assert any(b"<BANK_CARD_1>" in data for data in stored.values())  # the scan reads content
    assert leaks({**outputs, **stored}) == []


@pytest.mark.parametrize(
    "breaks",
    [
        pytest.param(lambda text: text[: len(text) // 2], id="cut-off"),
        pytest.param(
            lambda text: text.replace(f'"{SUPPORT_TRACE_ID}"', '"11010519491231002X"', 1),
            id="an-id-card-as-trace-id",
        ),
        pytest.param(
            lambda text: text.replace(
                '"startTimeUnixNano": "', '"startTimeUnixNano": "13812345678x', 1
            ),
            id="a-phone-in-a-bad-time",
        ),
        pytest.param(
            lambda text: text.replace(
                '"attributes": [', '"attributes": "6222021234567890128", "x": [', 1
            ),
            id="a-card-where-attributes-belong",
        ),
    ],
)
def test_a_malformed_export_is_refused_without_echoing_personal_data(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    breaks: Any,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.chdir(tmp_path)
    text = json.dumps(export(support_session()), ensure_ascii=False, indent=1)
    broken = breaks(text)
    assert broken != text
    exported = tmp_path / "export.json"
    exported.write_text(broken, "utf-8")
    db = tmp_path / "seatrial.db"

    result = invoke("cases", "from-trace", "--file", str(exported), "--db", f"sqlite:///{db}")

    assert result.exit_code == 2, result.output
    assert "export.json" in result.output
    assert leaks({"output": result.output, "logs": caplog.text}) == []
    assert not (tmp_path / "export.cases.yaml").exists()
    if db.exists():
        assert leaks(database_files(db)) == []


def test_a_trace_already_stored_becomes_a_case_by_its_id(tmp_path: Path) -> None:
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(export(support_session())), "utf-8")
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    with Store.open(url) as store:
        traces = read_trace_file(exported).traces
        ingest_traces(store, traces, source="otlp-json", masker=Masker())

    by_id = seatrial(
        "cases", "from-trace", SUPPORT_TRACE_ID, "--db", url, "--case-id", "refund-1", cwd=tmp_path
    )

    assert by_id.returncode == 0, by_id.stdout + by_id.stderr
    written = tmp_path / "refund-1.yaml"
    assert load_suite(written).cases[0].id == "refund-1"
    again = seatrial(
        "cases", "from-trace", SUPPORT_TRACE_ID, "--db", url, "--case-id", "refund-1", cwd=tmp_path
    )
    assert again.returncode == 2 and "--force" in again.stderr
    unknown = seatrial("cases", "from-trace", "0" * 32, "--db", url, cwd=tmp_path)
    assert unknown.returncode == 2
    both = seatrial("cases", "from-trace", SUPPORT_TRACE_ID, "--file", "x.json", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr
