"""Trace diff: the demo agents' real trajectories, and hand-built traces for each divergence."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from seatrial.compare._diff import TraceDiff, diff_attempts, diff_traces
from seatrial.compare._steps import steps_of
from seatrial.demo._demo import EXPECTED_V2_FAILURES, _run
from seatrial.gateway import ChatRequest, Gateway, GatewayConfig, Message, ModelConfig
from seatrial.record import AttemptRecord
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply
from seatrial.trace import Span, SpanEvent, Trace, TraceRecorder, new_id
from seatrial.trace import attrs as A

# -- the demo agents, run for real ----------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, dict[str, str]]]:
    """A store holding a v1 run, a v2 run and a second v1 run of the demo suite."""
    folder = tmp_path_factory.mktemp("demo")
    with Store.open(f"sqlite:///{folder / 'seatrial.db'}") as store:
        runs = {name: asyncio.run(_run(name[:2], store)) for name in ("v1", "v2", "v1-again")}
        yield store, runs


def attempt(store: Store, run_id: str, case_id: str) -> AttemptRecord:
    [record] = store.attempts(run_id, case_id, with_traces=True)
    return record


def reads(record: AttemptRecord) -> int:
    assert record.trace is not None
    return sum(1 for call in record.trace.tool_calls() if call.name == "read_file")


def test_v2_first_diverges_where_it_reads_the_missing_config_again(demo):
    store, runs = demo
    v1 = attempt(store, runs["v1"], "read-missing-config")
    v2 = attempt(store, runs["v2"], "read-missing-config")

    result = diff_attempts(v1, v2)

    first = result.first
    assert first is not None
    assert first.kind in ("extra_step", "different_tool")
    assert first.b is not None and first.b.kind == "tool_call"
    assert first.b.detail["name"] == "read_file"
    assert first.b.detail["success"] is False
    assert first.b.detail["error_type"] == "FileNotFoundError"
    # It is the read v1 never made: one more than v1's reads.
    before = [r.b for r in result.rows[: first.row] if r.b is not None]
    assert sum(1 for s in before if s.detail.get("name") == "read_file") == reads(v1)
    assert all(row.kind is None for row in result.rows[: first.row])
    assert [r.kind for r in first.led_to] == [None] * min(3, first.row)
    assert "read_file" in first.summary and "A replied" in first.summary
    assert "time (it had FAILED with FileNotFoundError)" in first.summary


def test_v2_first_diverges_at_the_second_write_without_a_grant(demo):
    store, runs = demo
    v1 = attempt(store, runs["v1"], "once-grant-second-write")
    v2 = attempt(store, runs["v2"], "once-grant-second-write")

    result = diff_attempts(v1, v2)

    first = result.first
    assert first is not None and first.b is not None
    assert all(row.kind is None for row in result.rows[: first.row])
    # v1 wrote once; the divergent step is v2's write in the second turn, and it was refused.
    assert first.b.turn == 1
    is_write = first.b.kind == "tool_call" and first.b.detail["name"] == "write_file"
    is_denial = first.b.kind == "permission" and first.b.detail["decision"] == "denied"
    assert is_write or is_denial
    denials = [
        r.b
        for r in result.rows[first.row :]
        if r.b is not None and r.b.kind == "permission" and r.b.detail["decision"] == "denied"
    ]
    assert [d.detail["tool"] for d in denials] == ["write_file"]
    assert "write_file" in first.summary


def test_two_runs_of_the_same_agent_are_identical_despite_ids_and_workspaces(demo):
    store, runs = demo
    for case_id in EXPECTED_V2_FAILURES:
        first = attempt(store, runs["v1"], case_id)
        again = attempt(store, runs["v1-again"], case_id)
        assert first.trace is not None and again.trace is not None
        ids = {s.span_id for s in first.trace.spans}
        assert ids.isdisjoint(s.span_id for s in again.trace.spans)

        result = diff_attempts(first, again)

        assert result.identical, (case_id, result.first)
        assert len(result.rows) == len(steps_of(first.trace, first.responses))


def test_only_the_cases_v2_fails_diverge_from_v1(demo):
    store, runs = demo
    for record in store.attempts(runs["v2"], with_traces=True):
        result = diff_attempts(attempt(store, runs["v1"], record.case_id), record)
        assert result.identical == (record.verdict == "PASS"), record.case_id


# -- hand-built traces ------------------------------------------------------------------------


class Recorder:
    """Builds a trace the way the adapters lay it out, with ids and clocks of its own."""

    def __init__(self, start: int = 1_700_000_000_000_000_000, step_ns: int = 1_000) -> None:
        self.clock = itertools.count(start, step_ns)
        self.root = self._span("invoke_agent demo", {A.OPERATION: A.OP_INVOKE_AGENT})
        self.spans = [self.root]
        self.turn = 0

    def _span(self, name: str, attributes: dict[str, Any]) -> Span:
        start = next(self.clock)
        return Span(
            trace_id=new_id(128),
            span_id=new_id(),
            name=name,
            start_time_unix_nano=start,
            end_time_unix_nano=start + random.randint(1, 900),
            attributes=attributes,
            status="ok",
        )

    def user(self, turn: int) -> Recorder:
        self.turn = turn
        self.root.events.append(
            SpanEvent(name=A.TURN, time_unix_nano=next(self.clock), attributes={A.TURN_INDEX: turn})
        )
        return self

    def chat(
        self,
        model: str = "planner-1",
        answer: list[dict[str, Any]] | None = None,
        request_hash: str | None = None,
        tokens: int = 40,
    ) -> Recorder:
        attributes: dict[str, Any] = {
            A.OPERATION: A.OP_CHAT,
            A.REQUEST_MODEL: model,
            A.INPUT_TOKENS: tokens,
            A.OUTPUT_TOKENS: tokens // 4,
            A.COST_USD: tokens / 1e5,
            A.TURN_INDEX: self.turn,
        }
        if answer is not None:
            attributes["gen_ai.output.messages"] = json.dumps(answer)
        if request_hash is not None:
            attributes["seatrial.gateway.request_hash"] = request_hash
        self.spans.append(self._span(f"chat {model}", attributes))
        return self

    def tool(
        self,
        name: str,
        arguments: dict[str, Any],
        result: Any = None,
        error: str | None = None,
        events: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    ) -> Recorder:
        span = self._span(
            f"execute_tool {name}",
            {
                A.OPERATION: A.OP_EXECUTE_TOOL,
                A.TOOL_NAME: name,
                A.TOOL_CALL_ID: f"call_{new_id()}",
                A.TOOL_ARGUMENTS: json.dumps(arguments),
                A.TURN_INDEX: self.turn,
            },
        )
        for event, attributes in events:
            span.events.append(
                SpanEvent(name=event, time_unix_nano=next(self.clock), attributes=attributes)
            )
        if error is None:
            span.attributes[A.TOOL_RESULT] = json.dumps(result)
        else:
            span.attributes[A.ERROR_TYPE] = error
            span.status = "error"
            span.status_message = f"{name} failed: {error}"
        self.spans.append(span)
        return self

    def trace(self) -> Trace:
        self.root.end_time_unix_nano = next(self.clock)
        return Trace(trace_id=new_id(128), spans=self.spans)


def answer(text: str = "", calls: list[tuple[str, dict[str, Any]]] = ()) -> list[dict[str, Any]]:  # type: ignore[assignment]
    parts: list[dict[str, Any]] = [{"type": "text", "content": text}] if text else []
    parts += [
        {"type": "tool_call", "id": f"call_{new_id()}", "name": n, "arguments": json.dumps(a)}
        for n, a in calls
    ]
    return [{"role": "assistant", "parts": parts, "finish_reason": "stop"}]


def permission(tool: str, decision: str, scope: str = "once") -> tuple[str, dict[str, Any]]:
    return A.PERMISSION, {
        A.PERMISSION_TOOL: tool,
        A.PERMISSION_SCOPE: scope,
        A.PERMISSION_DECISION: decision,
    }


def first_kind(result: TraceDiff) -> str | None:
    return result.first.kind if result.first is not None else None


def test_first_divergence_ignores_timing_only_changes():
    def build(start: int, step: int, tokens: int) -> Trace:
        return (
            Recorder(start, step)
            .user(0)
            .chat(tokens=tokens, answer=answer("look", [("read_file", {"path": "a.md"})]))
            .tool("read_file", {"path": "a.md"}, {"text": "hello", "elapsed_ms": step})
            .trace()
        )

    result = diff_traces(build(1, 10, 40), build(9_999_999, 777, 4000), ["hi"], ["hi"])

    assert result.identical
    assert [r.a.kind for r in result.rows if r.a] == ["model_call", "tool_call", "reply"]


def test_workspace_paths_ids_whitespace_and_model_names_are_not_divergences():
    a = (
        Recorder()
        .chat(model="planner-2025-06")
        .tool("run_command", {"command": "ls"}, {"cwd": "/tmp/seatrial-x-abc123/src"})
        .tool("lookup", {"q": "x"}, {"session": "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"})
        .trace()
    )
    b = (
        Recorder()
        .chat(model="planner-2026-01")
        .tool("run_command", {"command": "ls"}, {"cwd": "/tmp/seatrial-x-zz9911/src"})
        .tool("lookup", {"q": "x"}, {"session": "0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"})
        .trace()
    )

    result = diff_traces(a, b, ["Done:  two   files"], ["Done: two files\n"])

    assert result.identical
    assert result.to_dict()["models"] == {"a": ["planner-2025-06"], "b": ["planner-2026-01"]}


def test_different_arguments_name_both_values():
    a = Recorder().chat().tool("read_file", {"path": "config.yaml"}, "mode: dev").trace()
    b = Recorder().chat().tool("read_file", {"path": "config.yml"}, "mode: dev").trace()

    result = diff_traces(a, b)

    assert first_kind(result) == "different_arguments"
    assert result.first is not None and result.first.row == 1
    assert "config.yml" in result.first.summary and "config.yaml" in result.first.summary


def test_different_tool_result_and_failure():
    a = Recorder().tool("get_order", {"id": "A1"}, {"status": "paid"}).trace()
    b = Recorder().tool("get_order", {"id": "A1"}, {"status": "refunded"}).trace()
    failed = Recorder().tool("get_order", {"id": "A1"}, error="timeout").trace()

    assert first_kind(diff_traces(a, b)) == "different_tool_result"
    # A date is what a tool answered, not a clock: it is compared.
    booked = Recorder().tool("book", {"id": "A1"}, {"date": "2024-05-20"}).trace()
    rebooked = Recorder().tool("book", {"id": "A1"}, {"date": "2024-05-21"}).trace()
    assert first_kind(diff_traces(booked, rebooked)) == "different_tool_result"
    result = diff_traces(a, failed)
    assert first_kind(result) == "different_tool_result"
    assert result.first is not None and "FAILED with timeout" in result.first.summary


def test_different_tool_is_named():
    a = Recorder().chat().tool("search_flights", {"to": "SEA"}, []).trace()
    b = Recorder().chat().tool("book_flight", {"to": "SEA"}, {"ok": True}).trace()

    result = diff_traces(a, b)

    assert first_kind(result) == "different_tool"
    assert result.first is not None
    assert "book_flight" in result.first.summary and "search_flights" in result.first.summary


def test_extra_and_missing_steps_are_the_same_divergence_seen_from_each_side():
    short = Recorder().tool("read_file", {"path": "a"}, "x").trace()
    long = Recorder().tool("read_file", {"path": "a"}, "x").tool("list_directory", {}, []).trace()

    extra = diff_traces(short, long, ["ok"], ["ok"])
    missing = diff_traces(long, short, ["ok"], ["ok"])

    assert first_kind(extra) == "extra_step" and first_kind(missing) == "missing_step"
    assert extra.first is not None and extra.first.b is not None and extra.first.a is None
    assert extra.first.b.detail["name"] == "list_directory"
    assert [r.kind for r in extra.rows] == [None, "extra_step", None]


def test_different_model_answer_read_from_output_messages():
    a = Recorder().chat(answer=answer("", [("read_file", {"path": "a.md"})])).trace()
    b = Recorder().chat(answer=answer("", [("read_file", {"path": "b.md"})])).trace()
    same = Recorder().chat(answer=answer("", [("read_file", {"path": "a.md"})])).trace()

    result = diff_traces(a, b)

    assert first_kind(result) == "different_model_answer"
    assert result.first is not None and "b.md" in result.first.summary
    assert diff_traces(a, same).identical  # tool-call ids in the answer are ignored


def test_different_request_hash_comes_before_the_answer():
    a = Recorder().chat(request_hash="9f" * 16, answer=answer("yes")).trace()
    b = Recorder().chat(request_hash="3c" * 16, answer=answer("no")).trace()

    assert first_kind(diff_traces(a, b)) == "different_model_request"


def test_a_side_without_the_gateway_attributes_compares_on_what_both_recorded():
    with_hash = Recorder().chat(request_hash="9f" * 16, answer=answer("yes")).trace()
    without = Recorder().chat().trace()

    assert diff_traces(with_hash, without).identical


def test_permission_and_state_change_divergences():
    granted = Recorder().tool(
        "write_file",
        {"path": "a"},
        {"ok": True},
        events=[permission("write_file", "granted"), (A.STATE_CHANGE, {A.STATE_TARGET: "a"})],
    )
    denied = Recorder().tool(
        "write_file", {"path": "a"}, {"ok": True}, events=[permission("write_file", "denied")]
    )
    elsewhere = Recorder().tool(
        "write_file",
        {"path": "a"},
        {"ok": True},
        events=[permission("write_file", "granted"), (A.STATE_CHANGE, {A.STATE_TARGET: "b"})],
    )
    a = granted.trace()

    result = diff_traces(a, denied.trace())
    assert first_kind(result) == "different_permission"
    assert result.first is not None and "denied" in result.first.summary
    assert first_kind(diff_traces(a, elsewhere.trace())) == "different_state_change"


def test_replies_follow_their_turns_and_differ_as_replies():
    def build() -> Recorder:
        return Recorder().user(0).chat().tool("read_file", {"path": "a"}, "x").user(1).chat()

    a, b = build().trace(), build().trace()

    result = diff_traces(a, b, ["first", "second"], ["first", "SECOND, different"])

    kinds = [(r.a.kind, r.a.turn) for r in result.rows if r.a is not None]
    assert kinds == [
        ("model_call", 0),
        ("tool_call", 0),
        ("reply", 0),
        ("model_call", 1),
        ("reply", 1),
    ]
    assert first_kind(result) == "different_reply" and result.first is not None
    assert result.first.row == 4


def test_a_repeated_prefix_is_reported_where_the_repetition_starts():
    # Matched naively, B's trailing a, b, c would pair with A's and B's first two steps would
    # look extra, putting the divergence at step 1 although the two start the same way.
    def read(recorder: Recorder, *paths: str) -> Recorder:
        for path in paths:
            recorder.tool("read_file", {"path": path}, path.upper())
        return recorder

    a = read(Recorder(), "a", "b", "c").trace()
    b = read(Recorder(), "a", "b", "a", "b", "c").trace()

    result = diff_traces(a, b, ["done"], ["done"])

    assert result.first is not None and result.first.row == 2
    assert result.first.kind == "extra_step"
    assert "a 2nd time" in result.first.summary
    assert [r.kind for r in result.rows] == [None, None, "extra_step", "extra_step", None, None]


def test_missing_traces_compare_their_replies():
    assert diff_traces(None, None, ["same"], ["same"]).identical
    assert first_kind(diff_traces(None, None, ["one"], ["two"])) == "different_reply"


def test_json_shape_for_the_dashboard(demo):
    store, runs = demo
    v1 = attempt(store, runs["v1"], "read-missing-config")
    v2 = attempt(store, runs["v2"], "read-missing-config")

    data = json.loads(json.dumps(diff_attempts(v1, v2).to_dict()))

    assert set(data) == {"identical", "models", "counts", "first_divergence", "rows"}
    assert data["identical"] is False
    assert data["models"] == {"a": ["planner-2025-06"], "b": ["planner-2026-01"]}
    assert data["counts"]["rows"] == len(data["rows"])
    assert data["counts"]["same"] + data["counts"]["different"] == len(data["rows"])
    first = data["first_divergence"]
    assert set(first) == {"row", "kind", "summary", "a", "b", "led_to"}
    row = data["rows"][first["row"]]
    assert row["kind"] == first["kind"] and row["b"] == first["b"]
    assert set(row["b"]) == {"index", "kind", "turn", "label", "span_id", "detail"}
    assert row["b"]["detail"]["name"] == "read_file"
    assert [r["row"] for r in first["led_to"]] == list(range(first["row"] - 3, first["row"]))


# -- model calls as the gateway records them ----------------------------------------------------


async def gateway_trace(prompt: str, reply: str) -> Trace:
    """The trace of one real call through the gateway to a scripted model."""
    async with FakeOpenAI(FakeReply(reply)) as upstream:
        model = ModelConfig(name="m", model="m-v1", base_url=upstream.base_url)
        recorder = TraceRecorder()
        gateway = Gateway(GatewayConfig(models={"m": model}))
        try:
            with recorder.activate():
                request = ChatRequest(messages=[Message(role="user", content=prompt)], model="m")
                await gateway.chat(request)
        finally:
            await gateway.aclose()
    return recorder.trace()


async def test_gateway_model_calls_compare_on_request_and_answer(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = await gateway_trace("Read a.md", "Reading a.md")
    again = await gateway_trace("Read a.md", "Reading a.md")
    other_answer = await gateway_trace("Read a.md", "Reading b.md")
    other_prompt = await gateway_trace("Read b.md", "Reading a.md")

    assert diff_traces(base, again).identical
    answered = diff_traces(base, other_answer)
    assert first_kind(answered) == "different_model_answer"
    assert answered.first is not None and "Reading b.md" in answered.first.summary
    assert first_kind(diff_traces(base, other_prompt)) == "different_model_request"


def test_plain_and_namespaced_event_attributes_give_the_same_steps():
    """An agent that writes `tool`/`op` plainly diffs the same as one that namespaces them."""

    def trace_with(permission: dict[str, Any], change: dict[str, Any]) -> Trace:
        span = Span(
            trace_id="ab" * 16,
            span_id="1" * 16,
            name="execute_tool write_file",
            start_time_unix_nano=1,
            end_time_unix_nano=2,
            attributes={A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: "write_file"},
            events=[
                SpanEvent(name=A.PERMISSION, time_unix_nano=1, attributes=permission),
                SpanEvent(name=A.STATE_CHANGE, time_unix_nano=2, attributes=change),
            ],
        )
        return Trace(trace_id="ab" * 16, spans=[span])

    plain = trace_with(
        {"tool": "write_file", "scope": "once", "decision": "granted"},
        {"target": "a.md", "op": "create"},
    )
    spaced = trace_with(
        {
            A.PERMISSION_TOOL: "write_file",
            A.PERMISSION_SCOPE: "once",
            A.PERMISSION_DECISION: "granted",
        },
        {A.STATE_TARGET: "a.md", A.STATE_OP: "create"},
    )
    labels = [step.label for step in steps_of(plain)]
    assert labels == [step.label for step in steps_of(spaced)]
    assert "permission write_file: granted (once)" in labels
    assert "state change: create a.md" in labels


def test_the_markdown_diff_keeps_an_agents_html_inert_under_a_real_renderer():
    from markdown_it import MarkdownIt

    from seatrial.compare import render_markdown

    a = Recorder().chat(answer=answer("好的 <script>alert(1)</script>")).trace()
    b = Recorder().chat(answer=answer("好的 <img src=x onerror=alert(1)>")).trace()

    text = render_markdown(diff_traces(a, b))
    rendered = MarkdownIt("commonmark").enable("table").render(text)

    assert first_kind(diff_traces(a, b)) == "different_model_answer"
    assert "<script" not in rendered and "<img" not in rendered
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered and "好的" in rendered
    assert "<table>" in rendered and "<strong>First divergence" in rendered
