"""Loading suites from YAML and JSON: every file shape, defaults, fixtures, the seed samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.case import Limits, load_suite
from seatrial.errors import SuiteError

DATA = Path(__file__).parent / "data"
Write = Callable[[str, str], Path]


def test_yaml_suite_mapping_loads_name_cases_rubrics_gate_and_agent(write: Write) -> None:
    path = write(
        "smoke.yaml",
        """
        suite: booking-smoke
        agent: http://127.0.0.1:9000/chat
        gate: {min_pass_rate: 0.9}
        rubrics:
          预约: 明确告知预约成功
        cases:
          - id: book-1
            input: 帮我约明天上午的清洁服务
            category: 预约
          - id: book-2
            turns: [帮我约清洁, 还是上次那个地址]
        """,
    )
    suite = load_suite(path)
    assert suite.name == "booking-smoke"
    assert suite.path == str(path.resolve())
    assert suite.agent == "http://127.0.0.1:9000/chat"
    assert suite.gate.min_pass_rate == 0.9
    assert suite.rubrics == {"预约": "明确告知预约成功"}
    assert [case.id for case in suite.cases] == ["book-1", "book-2"]
    assert suite.case("book-1").user_turns == ["帮我约明天上午的清洁服务"]
    assert suite.case("book-2").user_turns == ["帮我约清洁", "还是上次那个地址"]
    assert suite.case("book-2").kind == "multi_turn"


def test_suite_without_a_name_is_named_after_the_file(write: Write) -> None:
    suite = load_suite(write("nightly.yml", "cases:\n  - {id: a, input: hi}\n"))
    assert suite.name == "nightly"


def test_turns_accept_strings_and_role_content_mappings(write: Write) -> None:
    path = write(
        "t.yaml",
        """
        cases:
          - id: mixed
            turns:
              - 第一句
              - {role: user, content: 第二句}
        """,
    )
    assert load_suite(path).cases[0].user_turns == ["第一句", "第二句"]


def test_a_top_level_list_is_a_suite_of_those_cases(write: Write) -> None:
    suite = load_suite(write("list.yaml", "- {id: a, input: x}\n- case: {id: b, input: y}\n"))
    assert suite.name == "list"
    assert [case.id for case in suite.cases] == ["a", "b"]


def test_defaults_fill_unset_fields_and_unset_mapping_keys(write: Write) -> None:
    path = write(
        "d.yaml",
        """
        defaults:
          repeats: 3
          priority: P0
          tags: [regression]
          limits: {tool_calls: 5, wall_time_ms: 3000}
          context: {user_id: qa-user, channel: eval}
          metadata: {team: qa}
        cases:
          - id: inherits
            input: hi
          - id: overrides
            input: hi
            repeats: 1
            tags: [own]
            limits: {tool_calls: 2}
            context: {user_id: vip-user}
        """,
    )
    suite = load_suite(path)
    inherits, overrides = suite.cases
    assert inherits.repeats == 3
    assert inherits.priority == "P0"
    assert inherits.tags == ["regression"]
    assert inherits.limits == Limits(tool_calls=5, wall_time_ms=3000)
    assert overrides.repeats == 1
    assert overrides.priority == "P0"
    # Lists are never merged: the case's own list replaces the default.
    assert overrides.tags == ["own"]
    # Mappings are filled key by key.
    assert overrides.limits == Limits(tool_calls=2, wall_time_ms=3000)
    assert overrides.context == {"user_id": "vip-user", "channel": "eval"}
    assert overrides.metadata == {"team": "qa"}


def test_defaults_do_not_give_input_to_a_case_with_turns(write: Write) -> None:
    path = write(
        "d.yaml",
        """
        defaults: {input: 默认问题}
        cases:
          - {id: chat, turns: [a, b]}
          - {id: plain}
        """,
    )
    chat, plain = load_suite(path).cases
    assert chat.user_turns == ["a", "b"]
    assert plain.input == "默认问题"


def test_defaults_do_not_leak_between_cases(write: Write) -> None:
    path = write(
        "d.yaml",
        """
        defaults: {context: {profile: {vip: false}}}
        cases:
          - {id: a, input: x}
          - {id: b, input: y}
        """,
    )
    first, second = load_suite(path).cases
    assert first.context is not second.context
    assert first.context["profile"] is not second.context["profile"]


def test_fixture_is_resolved_against_the_suite_file_and_stored_absolute(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "suites" / "fixtures" / "ws").mkdir(parents=True)
    write("suites/s.yaml", "cases:\n  - {id: a, input: x, fixture: fixtures/ws}\n")
    monkeypatch.chdir(tmp_path)  # the working folder must not matter
    case = load_suite(Path("suites/s.yaml")).cases[0]
    assert case.fixture == str((tmp_path / "suites" / "fixtures" / "ws").resolve())
    assert Path(case.fixture).is_absolute()


def test_seed_001_json_sample_loads_as_a_suite_of_one() -> None:
    suite = load_suite(DATA / "read-only-001.json")
    assert suite.name == "read-only-001"
    (case,) = suite.cases
    assert case.id == "read-only-001"
    assert case.input == "列出 workspace 中所有 Markdown 文件"
    assert case.fixture == str((DATA / "fixtures" / "three-files").resolve())
    assert case.allowed_tools == ["list_directory", "read_file"]
    assert case.expected_files == ["README.md", "docs/design.md"]
    assert case.forbidden_events == ["write_file", "run_command", "network_request"]
    assert case.limits == Limits(tool_calls=5, wall_time_ms=3000)


def test_seed_002_yaml_case_loads_with_its_layered_assertions() -> None:
    suite = load_suite(DATA / "order_booking_001.yaml")
    assert suite.name == "order_booking_001"
    (case,) = suite.cases
    assert case.name == "老用户预约-确认默认地址"
    assert case.kind == "multi_turn"
    assert case.priority == "P0"
    assert case.context["user_profile"]["phone"] == "138****1234"
    assert case.user_turns == ["帮我约明天上午的清洁服务", "还是上次那个地址"]
    assert case.created_at == "2026-07-01"
    assert [a.type for a in case.assertions] == [
        "skill_routed",
        "tool_called",
        "tool_params",
        "side_effect",
        "semantic",
    ]
    tool_params = case.assertions[2]
    assert tool_params.params == {
        "tool": "create_order",
        "params": {"service_type": "清洁服务", "time_slot": "tomorrow_morning"},
    }
    assert case.assertions[3].params["expected"] == {
        "status": "pending",
        "service_type": "清洁服务",
    }
    assert case.assertions[4].level == "L3"
    assert case.assertions[4].params["criteria"].startswith("明确告知用户预约成功")


def test_a_case_block_keeps_the_files_suite_level_keys(write: Write) -> None:
    path = write(
        "one.yaml",
        """
        agent: http://127.0.0.1:9000/chat
        case:
          id: solo
          input: hi
        """,
    )
    suite = load_suite(path)
    assert suite.agent == "http://127.0.0.1:9000/chat"
    assert [case.id for case in suite.cases] == ["solo"]


def test_load_suite_accepts_a_string_path(write: Write) -> None:
    path = write("s.yaml", "cases:\n  - {id: a, input: x}\n")
    assert load_suite(str(path)).cases[0].id == "a"


def test_an_unsupported_extension_is_refused_with_the_accepted_ones(write: Write) -> None:
    path = write("cases.txt", "id: a\n")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    (problem,) = caught.value.problems
    assert "not a suite format" in problem.message
    assert ".jsonl" in problem.fix and ".xlsx" in problem.fix
