"""`seatrial ingest`, run as a user runs it: exported files in, masked production traces
stored, a bad file refused with its line and nothing stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from seatrial.store import Store, TraceQuery
from seatrial.trace import Span, Trace, attrs, trace_to_otlp
from tests.conftest import bundled_data

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
PHONE = "13812345678"
NAME = "张伟"


def seatrial(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def export_file(folder: Path, trace_id: str = "ab" * 16, name: str = "export.json") -> Path:
    """An OTLP/JSON export: a chat and a tool call whose arguments hold a phone and a name."""
    start = 1_764_000_000_000_000_000
    trace = Trace(
        trace_id=trace_id,
        spans=[
            Span(
                trace_id=trace_id,
                span_id="0000000000000001",
                name="chat qwen-max",
                start_time_unix_nano=start,
                end_time_unix_nano=start + 10**9,
                attributes={
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "qwen-max",
                    attrs.INPUT_TOKENS: 300,
                    attrs.OUTPUT_TOKENS: 20,
                },
            ),
            Span(
                trace_id=trace_id,
                span_id="0000000000000002",
                name="execute_tool call_customer",
                start_time_unix_nano=start + 2 * 10**9,
                end_time_unix_nano=start + 3 * 10**9,
                attributes={
                    attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                    attrs.TOOL_NAME: "call_customer",
                    attrs.TOOL_ARGUMENTS: json.dumps({"phone": PHONE, "name": NAME}),
                },
            ),
        ],
    )
    path = folder / name
    path.write_text(json.dumps(trace_to_otlp(trace, "support-bot")), encoding="utf-8")
    return path


def project(tmp_path: Path) -> Path:
    """A project folder whose seatrial.yaml masks one customer's name."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "seatrial.yaml").write_text(f"mask:\n  names: [{NAME}]\n", encoding="utf-8")
    return folder


def test_an_export_is_stored_masked_with_the_projects_settings_and_once_only(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    path = export_file(folder)

    first = seatrial("ingest", str(path), "--db", url, cwd=folder)
    again = seatrial("ingest", str(path), "--db", url, cwd=folder)

    assert first.returncode == 0, first.stderr
    assert "otlp-json, 1 trace, 2 spans, masked: name 1, phone 1" in first.stdout
    assert again.returncode == 0, again.stderr
    assert "0 spans, 2 spans already stored (skipped)" in again.stdout
    with Store.open(url) as store:
        (head,) = store.trace_heads(TraceQuery())
        assert (head.service, head.source, head.span_count) == ("support-bot", "otlp-json", 2)
        (call,) = store.ingested_trace(head.trace_id).tool_calls()
    assert call.arguments == {"phone": "<PHONE_1>", "name": "<NAME_1>"}
    stored = (tmp_path / "store.db").read_bytes()
    assert PHONE.encode() not in stored
    assert NAME.encode() not in stored


def test_files_of_several_formats_are_recognised_and_totalled(tmp_path: Path) -> None:
    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    swe = bundled_data("swe-agent/function_calling_simple.traj.json")

    done = seatrial("ingest", str(export_file(folder)), str(swe), "--db", url, cwd=folder)

    assert done.returncode == 0, done.stderr
    assert f"{swe}: swe-agent, 1 trace," in done.stdout
    assert "2 files: 2 traces" in done.stdout
    with Store.open(url) as store:
        sources = sorted(head.source for head in store.trace_heads(TraceQuery()))
    assert sources == ["otlp-json", "swe-agent"]


def test_a_bad_file_stops_the_command_naming_its_line_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    good = export_file(folder)
    line = json.dumps(json.loads(good.read_text(encoding="utf-8")))
    bad = folder / "exports.jsonl"
    bad.write_text(f'{line}\n{line}\n{{"resourceSpans": [{PHONE}\n', encoding="utf-8")

    done = seatrial("ingest", str(good), str(bad), "--db", url, cwd=folder)

    assert done.returncode == 2
    assert f"{bad}:3" in done.stderr
    assert PHONE not in done.stderr
    with Store.open(url) as store:
        assert store.trace_heads(TraceQuery()) == []


def test_format_refuses_a_file_of_another_format_and_names_the_known_ones(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    path = export_file(folder)

    other = seatrial("ingest", str(path), "--format", "langfuse", "--db", url, cwd=folder)
    unknown = seatrial("ingest", str(path), "--format", "zipkin", "--db", url, cwd=folder)
    right = seatrial("ingest", str(path), "--format", "otlp-json", "--db", url, cwd=folder)

    assert other.returncode == 2
    assert "this file is otlp-json, not langfuse" in other.stderr
    assert unknown.returncode == 2
    assert "openinference" in unknown.stderr
    assert right.returncode == 0, right.stderr


def test_the_trace_list_shows_a_swe_agent_trajectorys_tokens_and_a_chats_own(
    tmp_path: Path,
) -> None:
    # SWE-agent keeps its tokens as totals (info.model_stats), not on each model turn; an
    # OTLP export's model calls carry theirs, and those are what it shows.
    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    swe = bundled_data("swe-agent/gpt4_pydicom-1458.traj.json")
    stats = json.loads(swe.read_text(encoding="utf-8"))["info"]["model_stats"]

    done = seatrial("ingest", str(swe), str(export_file(folder)), "--db", url, cwd=folder)
    listed = seatrial("traces", "list", "--format", "json", "--db", url, cwd=folder)

    assert done.returncode == 0, done.stderr
    tokens = {
        row["source"]: (row["input_tokens"], row["output_tokens"])
        for row in json.loads(listed.stdout)
    }
    assert tokens == {
        "swe-agent": (stats["tokens_sent"], stats["tokens_received"]),
        "otlp-json": (300, 20),
    }
    table = seatrial("traces", "list", "--db", url, cwd=folder).stdout
    assert f"{stats['tokens_sent']}/{stats['tokens_received']}" in table


def test_a_langfuse_v2_observations_export_keeps_each_traces_session_and_user(
    tmp_path: Path,
) -> None:
    # GET /api/public/v2/observations: each observation repeats its trace's session and user.
    def observation(trace: str, session: str, user: str) -> dict[str, object]:
        return {
            "id": f"obs-{trace}",
            "traceId": trace,
            "projectId": "p1",
            "type": "GENERATION",
            "name": "chat",
            "startTime": "2025-06-01T08:00:00.000Z",
            "endTime": "2025-06-01T08:00:01.000Z",
            "parentObservationId": None,
            "environment": "production",
            "userId": user,
            "sessionId": session,
            "providedModelName": "qwen-max",
            "input": [{"role": "user", "content": "订单到哪了"}],
            "output": {"role": "assistant", "content": "已发货"},
            "usageDetails": {"input": 12, "output": 3, "total": 15},
        }

    page = {
        "data": [observation("t-1", "s-1", "u-1"), observation("t-2", "s-2", "u-2")],
        "meta": {"cursor": "eyJsYXN0IjoxfQ=="},
    }
    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    path = folder / "observations.json"
    path.write_text(json.dumps(page, ensure_ascii=False), encoding="utf-8")

    done = seatrial("ingest", str(path), "--db", url, cwd=folder)

    assert done.returncode == 0, done.stderr
    with Store.open(url) as store:
        heads = {h.trace_id: h for h in store.trace_heads(TraceQuery())}
    assert {t: (h.session_id, h.user_id, h.models) for t, h in heads.items()} == {
        "t-1": ("s-1", "u-1", ["qwen-max"]),
        "t-2": ("s-2", "u-2", ["qwen-max"]),
    }


def test_span_links_are_stored_masked_and_written_back(tmp_path: Path) -> None:
    from seatrial.trace import SpanLink, traces_from_otlp

    folder = project(tmp_path)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    trace_id = "cd" * 16
    link = SpanLink(
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
        attributes={"caller": f"回拨 {PHONE}"},
    )
    span = Span(
        trace_id=trace_id,
        span_id="0000000000000009",
        name="process queued order",
        start_time_unix_nano=1_764_000_000_000_000_000,
        end_time_unix_nano=1_764_000_000_100_000_000,
        links=[link],
    )
    path = folder / "linked.json"
    path.write_text(json.dumps(trace_to_otlp(Trace(trace_id=trace_id, spans=[span]))), "utf-8")

    done = seatrial("ingest", str(path), "--db", url, cwd=folder)

    assert done.returncode == 0, done.stderr
    with Store.open(url) as store:
        (stored,) = store.ingested_trace(trace_id).spans
    (kept,) = stored.links
    assert (kept.trace_id, kept.span_id) == (link.trace_id, link.span_id)
    assert kept.attributes == {"caller": "回拨 <PHONE_1>"}
    (again,) = traces_from_otlp(trace_to_otlp(Trace(trace_id=trace_id, spans=[stored])))
    assert again.spans[0].links == [kept]
    assert PHONE.encode() not in (tmp_path / "store.db").read_bytes()
