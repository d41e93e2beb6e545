"""A ``model:`` agent's setup: tool schemas from files, OpenAPI and MCP, its seatrial.yaml
keys, and ``seatrial run --agent model:NAME`` from the command line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from seatrial.agent import ModelAgent, ModelAgentSettings, load_tools, resolve_agent
from seatrial.config import AgentConfig
from seatrial.errors import AgentSpecError
from seatrial.testing import FakeOpenAI

SEATRIAL = str(Path(sys.executable).parent / "seatrial")


def tools_of(tmp_path: Path, document: object, name: str = "tools.json") -> list[dict[str, Any]]:
    (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
    return load_tools(name, tmp_path, "agents.x.tools")


def test_an_mcp_tools_list_result_becomes_openai_function_tools(tmp_path: Path) -> None:
    result = {
        "tools": [
            {
                "name": "search_flights",
                "description": "Find flights.",
                "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}},
            },
            {"name": "ping"},
        ]
    }
    assert tools_of(tmp_path, result) == [
        {
            "type": "function",
            "function": {
                "name": "search_flights",
                "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
                "description": "Find flights.",
            },
        },
        {
            "type": "function",
            "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
        },
    ]


def test_openapi_operations_become_tools_with_their_parameters_and_body(
    tmp_path: Path,
) -> None:
    document = {
        "openapi": "3.0.3",
        "components": {
            "parameters": {"Id": {"name": "id", "in": "path", "schema": {"type": "integer"}}},
            "schemas": {
                "Booking": {
                    "type": "object",
                    "properties": {"slot": {"type": "string", "enum": ["am", "pm"]}},
                    "required": ["slot"],
                }
            },
        },
        "paths": {
            "/orders/{id}/bookings": {
                "parameters": [{"$ref": "#/components/parameters/Id"}],
                "post": {
                    "operationId": "book",
                    "description": "Book a visit.",
                    "parameters": [
                        {"name": "notify", "in": "query", "schema": {"type": "boolean"}}
                    ],
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Booking"}}
                        }
                    },
                },
                "get": {"summary": "List bookings"},
            }
        },
    }
    listing, book = tools_of(tmp_path, document, "api.yaml")
    assert book["function"] == {
        "name": "book",
        "description": "Book a visit.",
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "notify": {"type": "boolean"},
                "slot": {"type": "string", "enum": ["am", "pm"]},
            },
            "required": ["id", "slot"],
        },
    }
    assert listing["function"]["name"] == "get_orders_id_bookings"  # no operationId
    assert listing["function"]["description"] == "List bookings"


def test_a_tool_defined_twice_or_a_file_that_is_not_tools_is_refused(tmp_path: Path) -> None:
    twice = [{"name": "a"}, {"type": "function", "function": {"name": "a"}}]
    with pytest.raises(AgentSpecError, match="tool a defined twice"):
        load_tools(twice, tmp_path, "agents.x.tools")
    with pytest.raises(AgentSpecError, match="tool 1 has no `name`"):
        load_tools([{"description": "nameless"}], tmp_path, "agents.x.tools")
    with pytest.raises(AgentSpecError, match="cannot read the tool file"):
        load_tools("missing.json", tmp_path, "agents.x.tools")


def test_seatrial_yaml_takes_exactly_the_model_agent_keys() -> None:
    agent_keys = set(ModelAgentSettings.model_fields)
    assert agent_keys <= set(AgentConfig.model_fields)
    for key in agent_keys:
        assert AgentConfig.model_fields[key].default == ModelAgentSettings.model_fields[key].default


def test_a_prompt_given_twice_is_refused() -> None:
    agents = {"x": {"spec": "model:main", "system_prompt": "a", "system_prompt_file": "b.txt"}}
    with pytest.raises(AgentSpecError, match="give `system_prompt` or `system_prompt_file`"):
        resolve_agent("x", agents=agents, models={"main": object()})


def test_the_prompt_file_is_read_relative_to_seatrial_yaml(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("Be brief.", encoding="utf-8")
    agents = {"x": {"spec": "model:main", "system_prompt_file": "prompt.md"}}
    agent = resolve_agent("x", agents=agents, agents_dir=tmp_path, base_dir=tmp_path / "else")
    assert isinstance(agent, ModelAgent)
    assert (agent.system_prompt, agent.spec, agent.model) == ("Be brief.", "x", "main")
    agents = {"x": {"spec": "model:main", "system_prompt_file": "gone.md"}}
    with pytest.raises(AgentSpecError, match="cannot read system_prompt_file"):
        asyncio.run(resolve_agent("x", agents=agents, agents_dir=tmp_path).check())


def test_a_tool_schema_without_an_implementation_is_found_when_the_agent_is_checked(
    tmp_path: Path,
) -> None:
    agent = ModelAgent("model:main", ModelAgentSettings(tools=[{"name": "ping"}]))
    with pytest.raises(AgentSpecError, match="tool ping has no implementation"):
        asyncio.run(agent.check())


@pytest.mark.slow
def test_seatrial_run_with_a_model_spec_starts_the_gateway_or_exits_2(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "suite: s\ncases:\n  - {id: c, input: Capital of France?, "
        "assertions: [{type: contains, value: Paris}]}\n",
        encoding="utf-8",
    )

    def seatrial(spec: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [SEATRIAL, "run", "suite.yaml", "--agent", spec],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "200", "SEATRIAL_TEST_MODEL_KEY": "sk-model-agent"},
        )

    with FakeOpenAI("Paris.") as upstream:
        (tmp_path / "seatrial.yaml").write_text(
            "models:\n  main:\n    model: main-v1\n"
            f"    base_url: {upstream.base_url}\n    api_key_env: SEATRIAL_TEST_MODEL_KEY\n",
            encoding="utf-8",
        )
        done = seatrial("model:main")
        wrong = seatrial("model:mian")
        asked = len(upstream.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert asked == 1
    assert "sk-model-agent" not in done.stdout + done.stderr
    assert wrong.returncode == 2, wrong.stdout + wrong.stderr
    assert "no model `mian` under `models:` in seatrial.yaml" in wrong.stderr
    assert "Did you mean `model:main`?" in wrong.stderr
