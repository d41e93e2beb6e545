"""``seatrial mask``: what would be masked, shown with values hidden; nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from seatrial.trace import Span, Trace, trace_to_otlp

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
ID_CARD = "11010519491231002X"
CARD = "6222021234567890128"
RAW = ("13800138000", ID_CARD, CARD, "zhang.san@example.com", "王小明")


def seatrial(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def write_export(folder: Path) -> Path:
    span = Span(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        name="execute_tool refund",
        start_time_unix_nano=1_715_400_000_000_000_000,
        end_time_unix_nano=1_715_400_000_500_000_000,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "refund",
            "gen_ai.tool.call.arguments": json.dumps(
                {"phone": "138-0013-8000", "id": ID_CARD, "card": CARD}
            ),
            "user.note": "王小明 writes from zhang.san@example.com, phone 13800138000",
        },
    )
    path = folder / "export.json"
    path.write_text(
        json.dumps(trace_to_otlp(Trace(trace_id=span.trace_id, spans=[span]))), encoding="utf-8"
    )
    return path


def files_in(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_check_lists_each_value_hidden_with_its_token_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "seatrial.yaml").write_text("mask:\n  names: [王小明]\n", encoding="utf-8")
    export = write_export(tmp_path)
    before = files_in(tmp_path)
    result = seatrial("mask", "--check", str(export), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for raw in RAW:
        assert raw not in out + result.stderr
    assert "138****8000" in out and "<PHONE_1>" in out and "<ID_CARD_1>" in out
    assert "<BANK_CARD_1>" in out and "<EMAIL_1>" in out and "<NAME_1>" in out
    assert "attribute gen_ai.tool.call.arguments $.phone" in out
    assert "would mask 6 values" in out and "phone 2" in out and "name 1" in out
    assert files_in(tmp_path) == before


def test_without_check_the_masked_export_goes_to_standard_output(tmp_path: Path) -> None:
    export = write_export(tmp_path)
    result = seatrial("mask", str(export), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    attributes = {
        pair["key"]: pair["value"]
        for pair in document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    }
    arguments = json.loads(attributes["gen_ai.tool.call.arguments"]["stringValue"])
    assert arguments == {"phone": "<PHONE_1>", "id": "<ID_CARD_1>", "card": "<BANK_CARD_1>"}
    for raw in RAW[:4]:
        assert raw not in result.stdout


def test_a_plain_text_file_is_masked_line_by_line_with_one_set_of_tokens(tmp_path: Path) -> None:
    notes = tmp_path / "turns.txt"
    notes.write_text("我的手机 13800138000\n改成 13912345678, 旧的 13800138000 停用\n")
    check = seatrial("mask", "--check", str(notes), cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert "line 2" in check.stdout and "plain text" in check.stdout
    assert "13800138000" not in check.stdout
    printed = seatrial("mask", str(notes), cwd=tmp_path)
    assert printed.stdout.splitlines() == [
        "我的手机 <PHONE_1>",
        "改成 <PHONE_2>, 旧的 <PHONE_1> 停用",
    ]


def test_a_json_file_of_no_known_trace_format_is_an_input_error(tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"phone": "13800138000"}', encoding="utf-8")
    result = seatrial("mask", "--check", str(odd), cwd=tmp_path)
    assert result.returncode == 2
    assert "not a trace export" in result.stderr and "13800138000" not in result.stderr


def test_config_must_name_a_seatrial_yaml(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("mask: {}\n", encoding="utf-8")
    notes = tmp_path / "n.txt"
    notes.write_text("hello\n", encoding="utf-8")
    result = seatrial("mask", "--check", str(notes), "--config", str(other), cwd=tmp_path)
    assert result.returncode == 2 and "seatrial.yaml" in result.stderr
