"""Cassettes: a run's model answers recorded, then replayed bit for bit, strict or lenient."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from seatrial.errors import CassetteMismatch, GatewayError
from seatrial.gateway._cassette import Cassette, first_difference
from seatrial.gateway._config import CassetteConfig
from seatrial.gateway._types import (
    CallAttempt,
    ChatRequest,
    ChatResponse,
    ChatToolCall,
    Message,
    Usage,
)

BOOK_TOOL = {
    "type": "function",
    "function": {
        "name": "book_reservation",
        "parameters": {"type": "object", "properties": {"flight": {"type": "string"}}},
    },
}


def turn(*texts: str, run: str = "run-1", case: str = "book", attempt: int = 1) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="system", content="You book flights.")]
        + [Message(role="user", content=text) for text in texts],
        tools=[BOOK_TOOL],
        temperature=0.2,
        run_id=run,
        case_id=case,
        attempt=attempt,
    )


def answers() -> list[ChatResponse]:
    return [
        ChatResponse(
            message=Message(
                role="assistant",
                tool_calls=[
                    ChatToolCall(
                        id="call_a1", name="book_reservation", arguments='{"flight":"HAT170"}'
                    )
                ],
            ),
            usage=Usage(input_tokens=812, output_tokens=31, cached_input_tokens=512),
            cost_usd=0.001845,
            model="gpt4o",
            provider="openai",
            provider_model="gpt-4o-2024-08-06",
            finish_reason="tool_calls",
            latency_ms=731.5,
            fallback_used=True,
            attempts=[
                CallAttempt(model="gpt4o-primary", outcome="timeout", detail="no first byte"),
                CallAttempt(model="gpt4o", outcome="ok", latency_ms=700.1),
            ],
            route_rule="explicit",
        ),
        ChatResponse(
            message=Message(role="assistant", content="Booked HAT170 for May 20."),
            usage=Usage(input_tokens=860, output_tokens=12),
            cost_usd=0.00227,
            model="gpt4o",
            provider_model="gpt-4o-2024-08-06",
            finish_reason="stop",
            latency_ms=402.0,
        ),
    ]


def recorder(tmp_path: Path) -> Cassette:
    return Cassette(CassetteConfig(mode="record"), tmp_path)


def player(
    tmp_path: Path, match: Literal["strict", "lenient"] = "strict", **kwargs: str
) -> Cassette:
    return Cassette(CassetteConfig(mode="replay", match=match), tmp_path, **kwargs)


def record_attempt(tmp_path: Path, run: str = "run-1", attempt: int = 1) -> list[ChatResponse]:
    cassette = recorder(tmp_path)
    recorded = answers()
    cassette.record(turn("Book HAT170", run=run, attempt=attempt), recorded[0])
    cassette.record(turn("Book HAT170", "yes", run=run, attempt=attempt), recorded[1])
    return recorded


def test_a_replayed_attempt_gets_the_recorded_answers_bit_for_bit(tmp_path: Path) -> None:
    recorded = record_attempt(tmp_path)
    cassette = player(tmp_path)
    first = cassette.replay(turn("Book HAT170"))
    second = cassette.replay(turn("Book HAT170", "yes"))
    assert [first, second] == recorded
    assert first.model_dump_json() == recorded[0].model_dump_json()


def test_the_cassette_is_one_jsonl_file_per_run_in_the_default_folder(tmp_path: Path) -> None:
    record_attempt(tmp_path, run="run-1")
    record_attempt(tmp_path, run="run-2")
    folder = tmp_path / ".seatrial" / "cassettes"
    assert sorted(p.name for p in folder.iterdir()) == ["run-1.jsonl", "run-2.jsonl"]
    lines = [json.loads(line) for line in (folder / "run-1.jsonl").read_text().splitlines()]
    assert [(x["case_id"], x["attempt"], x["call"]) for x in lines] == [
        ("book", 1, 1),
        ("book", 1, 2),
    ]


def test_strict_replay_names_the_first_difference_in_the_request(tmp_path: Path) -> None:
    record_attempt(tmp_path)
    cassette = player(tmp_path)
    with pytest.raises(CassetteMismatch) as mismatch:
        cassette.replay(turn("Book HAT171"))
    message = str(mismatch.value)
    assert 'request.messages[1].content: "Book HAT170" (recorded) vs "Book HAT171" (now)' in message
    assert "call 1 of run 'run-1' case 'book' attempt 1" in message
    assert "lenient" in message


def test_strict_replay_accepts_an_attempts_calls_in_another_order(tmp_path: Path) -> None:
    recorded = record_attempt(tmp_path)
    cassette = player(tmp_path)
    assert cassette.replay(turn("Book HAT170", "yes")) == recorded[1]
    assert cassette.replay(turn("Book HAT170")) == recorded[0]


def test_lenient_replay_matches_by_position_whatever_is_asked(tmp_path: Path) -> None:
    recorded = record_attempt(tmp_path)
    cassette = player(tmp_path, match="lenient")
    assert cassette.replay(turn("Something else entirely")) == recorded[0]
    assert cassette.replay(turn("And again")) == recorded[1]
    with pytest.raises(CassetteMismatch, match="call 3 .* was not recorded: .* holds 2 calls"):
        cassette.replay(turn("A third call"))


def test_a_call_beyond_the_recording_is_a_mismatch(tmp_path: Path) -> None:
    record_attempt(tmp_path)
    cassette = player(tmp_path)
    cassette.replay(turn("Book HAT170"))
    cassette.replay(turn("Book HAT170", "yes"))
    with pytest.raises(CassetteMismatch, match="call 3 of run 'run-1' case 'book' attempt 1"):
        cassette.replay(turn("Book HAT170", "yes", "and a hotel"))


def test_replaying_a_run_never_recorded_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(CassetteMismatch, match=r"no cassette for run 'ghost' at .*ghost\.jsonl"):
        player(tmp_path).replay(turn("hi", run="ghost"))


def test_each_attempt_replays_its_own_recording(tmp_path: Path) -> None:
    cassette = recorder(tmp_path)
    one, two = answers()
    cassette.record(turn("Book HAT170", attempt=1), one)
    cassette.record(turn("Book HAT170", attempt=2), two)
    replay = player(tmp_path)
    assert replay.replay(turn("Book HAT170", attempt=2)) == two
    assert replay.replay(turn("Book HAT170", attempt=1)) == one


def test_a_stored_attempt_replays_under_a_new_run_id(tmp_path: Path) -> None:
    recorded = record_attempt(tmp_path, run="old-run", attempt=3)
    cassette = player(tmp_path)
    cassette.for_attempt("new-run", "book", 1, source_run_id="old-run", source_attempt=3)
    assert cassette.replay(turn("Book HAT170", run="new-run")) == recorded[0]
    assert cassette.replay(turn("Book HAT170", "yes", run="new-run")) == recorded[1]
    cassette.for_attempt("new-run", "book", 1, source_run_id="old-run", source_attempt=3)
    assert cassette.replay(turn("Book HAT170", run="new-run")) == recorded[0]
    assert not (tmp_path / ".seatrial" / "cassettes" / "new-run.jsonl").exists()


def test_a_whole_run_replays_from_another_runs_cassette(tmp_path: Path) -> None:
    recorded = record_attempt(tmp_path, run="old-run")
    cassette = player(tmp_path, source_run_id="old-run")
    assert cassette.replay(turn("Book HAT170", run="rerun")) == recorded[0]


def test_a_rerecorded_attempt_replaces_the_earlier_recording(tmp_path: Path) -> None:
    first = recorder(tmp_path)
    first.record(turn("Book HAT170"), answers()[1])
    second = recorder(tmp_path)  # a resumed run re-runs the unfinished attempt
    second.record(turn("Book HAT170"), answers()[0])
    assert player(tmp_path).replay(turn("Book HAT170")) == answers()[0]


def test_a_configured_folder_and_unusual_run_ids_stay_inside_it(tmp_path: Path) -> None:
    config = CassetteConfig(mode="record", path="tapes")
    cassette = Cassette(config, tmp_path)
    cassette.record(turn("hi", run="../team/run 7"), answers()[1])
    files = list((tmp_path / "tapes").iterdir())
    assert len(files) == 1 and files[0].suffix == ".jsonl" and files[0].parent == tmp_path / "tapes"
    replay = Cassette(CassetteConfig(mode="replay", path="tapes"), tmp_path)
    assert replay.replay(turn("hi", run="../team/run 7")) == answers()[1]


GOLDEN_LINE = (
    '{"v":1,"run_id":"run-1","case_id":"book","attempt":1,"call":1,'
    '"request":{"model":null,"messages":[{"role":"user","content":"Book HAT170"}],'
    '"temperature":0.2},'
    '"response":{"message":{"role":"assistant","content":"Booked.","tool_calls":[],'
    '"tool_call_id":null,"name":null},"usage":{"input_tokens":10,"output_tokens":2,'
    '"cached_input_tokens":0},"cost_usd":0.00005,"model":"gpt4o","provider":"openai",'
    '"provider_model":"gpt-4o-2024-08-06","finish_reason":"stop","latency_ms":300.0,'
    '"cached":false,"fallback_used":false,"attempts":[],"fault":null,"route_rule":"explicit"}}'
)


def test_a_cassette_written_in_format_1_still_replays(tmp_path: Path) -> None:
    folder = tmp_path / ".seatrial" / "cassettes"
    folder.mkdir(parents=True)
    (folder / "run-1.jsonl").write_text(GOLDEN_LINE + "\n", encoding="utf-8")
    request = ChatRequest(
        messages=[Message(role="user", content="Book HAT170")],
        temperature=0.2,
        run_id="run-1",
        case_id="book",
        attempt=1,
    )
    replayed = player(tmp_path).replay(request)
    assert replayed.message.content == "Booked."
    assert replayed.usage.input_tokens == 10 and replayed.route_rule == "explicit"


def test_a_damaged_cassette_names_its_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / ".seatrial" / "cassettes"
    folder.mkdir(parents=True)
    (folder / "run-1.jsonl").write_text(GOLDEN_LINE + "\n{not json\n", encoding="utf-8")
    with pytest.raises(GatewayError, match=r"run-1\.jsonl:2: not a cassette line"):
        player(tmp_path).replay(turn("Book HAT170"))


def test_first_difference_walks_nested_fields_and_lengths() -> None:
    assert first_difference({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}) is None
    assert first_difference({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "y"}]}) == (
        'request.a[1].b: "x" (recorded) vs "y" (now)'
    )
    assert (
        first_difference({"a": [1]}, {"a": [1, 2]})
        == "request.a[1]: <absent> (recorded) vs 2 (now)"
    )
    assert first_difference({"t": 0.0}, {"t": 0}) is None
    assert first_difference({"t": True}, {"t": 1}) == "request.t: true (recorded) vs 1 (now)"
    assert first_difference({}, {"seed": 7}) == "request.seed: <absent> (recorded) vs 7 (now)"
