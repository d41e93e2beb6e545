"""From an --agent spec or a seatrial.yaml name to an adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.agent import AgentAdapter, HttpAgent, PythonAgent, RecordedAgent, resolve_agent
from seatrial.case import Case
from seatrial.errors import AgentSpecError
from seatrial.testing import AgentServer
from tests.agent._drive import drive, make_context

AGENTS = Path(__file__).parent / "sample_agents.py"


def test_each_form_resolves_to_its_adapter(tmp_path):
    python = resolve_agent(f"python:{AGENTS}:support")
    http = resolve_agent("https://agents.example.com:8443/chat", concurrency=200, timeout_s=5)
    replay = resolve_agent("replay:recorded/sessions.jsonl", base_dir=tmp_path)
    assert isinstance(python, PythonAgent) and python.name == "support"
    assert isinstance(http, HttpAgent) and http.name == "agents.example.com:8443"
    assert isinstance(replay, RecordedAgent)
    assert replay.path == tmp_path / "recorded" / "sessions.jsonl"
    assert all(isinstance(a, AgentAdapter) for a in (python, http, replay))
    assert [a.spec for a in (python, http, replay)] == [
        f"python:{AGENTS}:support",
        "https://agents.example.com:8443/chat",
        "replay:recorded/sessions.jsonl",
    ]


async def test_a_named_agent_uses_its_headers_and_timeout(monkeypatch):
    monkeypatch.setenv("SUPPORT_TOKEN", "t0k")
    async with AgentServer(lambda request: "hello") as server:
        agents = {
            "support-staging": {
                "spec": server.url,
                "headers": {"Authorization": "Bearer ${SUPPORT_TOKEN}"},
                "timeout_s": 3,
            },
            "local": f"python:{AGENTS}:support",
        }
        adapter = resolve_agent("support-staging", agents=agents)
        assert adapter.name == "support-staging"
        output, trace = await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert output.response == "hello"
    assert server.requests[0].headers["authorization"] == "Bearer t0k"
    assert trace.spans[0].name == "invoke_agent support-staging"
    assert isinstance(resolve_agent("local", agents=agents), PythonAgent)


def test_an_unknown_spec_lists_the_accepted_forms_and_a_close_name():
    with pytest.raises(AgentSpecError) as caught:
        resolve_agent("support-stagin", agents={"support-staging": "http://127.0.0.1:1/"})
    message = str(caught.value)
    assert "Did you mean `support-staging`?" in message
    forms = ("python:module:function", "http://host:port/path", "recorded:")
    for form in (*forms, "seatrial.yaml"):
        assert form in message
    assert "replay:" not in message  # still accepted, no longer advertised


def test_headers_are_refused_for_agents_that_are_not_http():
    agents = {"local": {"spec": f"python:{AGENTS}:support", "headers": {"X": "y"}}}
    with pytest.raises(AgentSpecError, match="apply to http agents only"):
        resolve_agent("local", agents=agents)


def test_a_named_agent_with_a_bad_spec_says_so():
    with pytest.raises(AgentSpecError, match="agent `x` in seatrial.yaml has spec `ftp://h`"):
        resolve_agent("x", agents={"x": "ftp://h"})


def test_named_agents_resolve_relative_paths_against_the_config_folder(tmp_path):
    agents = {"recorded": "replay:recorded/sessions.jsonl"}
    adapter = resolve_agent(
        "recorded", agents=agents, base_dir=tmp_path / "suites", agents_dir=tmp_path
    )
    assert isinstance(adapter, RecordedAgent)
    assert adapter.path == tmp_path / "recorded" / "sessions.jsonl"
    direct = resolve_agent("replay:x.jsonl", base_dir=tmp_path / "suites", agents_dir=tmp_path)
    assert isinstance(direct, RecordedAgent)
    assert direct.path == tmp_path / "suites" / "x.jsonl"


def test_recorded_and_replay_prefixes_name_the_same_recorded_sessions(tmp_path):
    recorded = resolve_agent("recorded:sessions.jsonl", base_dir=tmp_path)
    replay = resolve_agent("replay:sessions.jsonl", base_dir=tmp_path)
    assert isinstance(recorded, RecordedAgent) and isinstance(replay, RecordedAgent)
    assert recorded.path == replay.path == tmp_path / "sessions.jsonl"
    assert recorded.spec == "recorded:sessions.jsonl"  # the spec is kept as the user wrote it
    with pytest.raises(AgentSpecError):
        resolve_agent("recording:sessions.jsonl", base_dir=tmp_path)
