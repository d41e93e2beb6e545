"""Validation: every problem in a file is reported with its line and a concrete fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.assertion import known_types
from seatrial.case import load_suite, validate_paths
from seatrial.errors import Problem, SuiteError

Write = Callable[[str, str], Path]


def problems_in(path: Path) -> list[Problem]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.problems == validate_paths([path])
    return caught.value.problems


def only_problem(path: Path) -> Problem:
    (problem,) = problems_in(path)
    return problem


def test_yaml_syntax_error_names_the_line(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: "unclosed
          - id: b
        """,
    )
    problem = only_problem(path)
    assert problem.line == 3
    assert problem.message.startswith("YAML syntax error")
    assert "quot" in problem.fix


def test_json_syntax_error_names_the_line(write: Write) -> None:
    path = write("c.json", '{\n  "id": "a",\n  "input": "x"\n  "repeats": 2\n}\n')
    problem = only_problem(path)
    assert problem.line == 4
    assert "missing comma" in problem.fix


def test_unknown_field_suggests_the_closest_known_one(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: hi
            asserts: []
        """,
    )
    problem = only_problem(path)
    assert problem.line == 4
    assert problem.message == "case `a`: unknown field `asserts`; did you mean `assertions`?"
    assert problem.fix == "rename it to `assertions`"


def test_unknown_field_without_a_close_match_lists_the_known_fields(write: Write) -> None:
    path = write("s.yaml", "cases:\n  - {id: a, input: hi, zzz: 1}\n")
    problem = only_problem(path)
    assert problem.message == "case `a`: unknown field `zzz`"
    assert "expected_files" in problem.fix and "forbidden_events" in problem.fix


def test_wrong_type_says_what_is_expected_and_what_was_written(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: hi
            repeats: three
        """,
    )
    problem = only_problem(path)
    assert problem.line == 4
    assert problem.message == "case `a`: `repeats` must be a whole number >= 1, got 'three'"
    assert problem.fix == "write a whole number >= 1, e.g. `repeats: 3`"


def test_nested_wrong_value_points_at_its_own_line(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: hi
            limits:
              tool_calls: 5
              wall_time_ms: soon
            permissions:
              write_file: twice
        """,
    )
    first, second = problems_in(path)
    assert (first.line, second.line) == (6, 8)
    assert first.message == "case `a`: `limits.wall_time_ms` must be a number >= 0, got 'soon'"
    assert second.message == (
        "case `a`: `permissions.write_file` must be one of once, session, deny, got 'twice'"
    )


def test_missing_input_and_turns_is_reported_at_the_case(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: ok
            input: hi
          - id: silent
            category: 预约
        """,
    )
    problem = only_problem(path)
    assert problem.line == 4
    assert problem.message == "case `silent`: has no `input` or `turns`"
    assert "input:" in problem.fix and "turns:" in problem.fix


def test_input_and_turns_together_is_a_problem(write: Write) -> None:
    path = write("s.yaml", "cases:\n  - id: a\n    input: hi\n    turns: [hi]\n")
    problem = only_problem(path)
    assert problem.line == 4
    assert "both `input` and `turns`" in problem.message


def test_missing_id_asks_for_one(write: Write) -> None:
    problem = only_problem(write("s.yaml", "cases:\n  - input: hi\n"))
    assert problem.line == 2
    assert problem.message == "case 1: `id` is required"
    assert problem.fix.startswith("add `id:")


def test_a_task_alias_error_names_task(write: Write) -> None:
    problem = only_problem(write("s.yaml", "cases:\n  - id: a\n    task: [1, 2]\n"))
    assert problem.line == 3
    assert problem.message.startswith("case `a`: `task` must be text")


def test_unknown_assertion_type_suggests_and_lists_every_known_type(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: hi
            assertions:
              - type: tool_called
                expected: search
              - type: tool_caled
                expected: search
        """,
    )
    problem = only_problem(path)
    assert problem.line == 7
    assert problem.message.startswith(
        "case `a`: unknown assertion type `tool_caled`; did you mean `tool_called`? known types: "
    )
    listed = problem.message.split("known types: ")[1].split(", ")
    assert listed == known_types()
    assert problem.fix == "change it to `tool_called`"


def test_promptfoo_style_alias_is_a_known_assertion_type(write: Write) -> None:
    path = write(
        "s.yaml",
        "cases:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: not-contains, value: 订单号}\n",
    )
    assert load_suite(path).cases[0].assertions[0].type == "not-contains"


def test_assertion_parameters_are_checked_against_the_type(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: hi
            assertions:
              - type: tool_called
                expectd: create_order
              - type: no_loop
                max_repeats: often
        """,
    )
    problems = problems_in(path)
    by_line = {p.line: p for p in problems}
    assert by_line[6].message == (
        "case `a`: assertion `tool_called`: unknown parameter `expectd`; did you mean `expected`?"
    )
    assert by_line[6].fix == "rename it to `expected`"
    assert by_line[8].message == (
        "case `a`: assertion `no_loop`: `max_repeats` must be a whole number >= 0, got 'often'"
    )
    # the missing `expected` of tool_called is reported too, at the assertion
    assert any(p.message.endswith("`expected` is required") and p.line == 5 for p in problems)


def test_missing_fixture_folder_names_where_it_looked(write: Write, tmp_path: Path) -> None:
    path = write("s.yaml", "cases:\n  - id: a\n    input: hi\n    fixture: fixtures/nope\n")
    problem = only_problem(path)
    assert problem.line == 4
    assert "fixture folder `fixtures/nope` does not exist" in problem.message
    assert str(tmp_path / "fixtures" / "nope") in problem.message
    assert "create the folder" in problem.fix


def test_a_fixture_that_is_a_file_is_refused(write: Write) -> None:
    write("fixtures/ws", "a file, not a folder\n")
    path = write("s.yaml", "cases:\n  - {id: a, input: hi, fixture: fixtures/ws}\n")
    assert "is a file, not a folder" in only_problem(path).message


def test_duplicate_ids_name_both_lines(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        cases:
          - id: a
            input: one
          - id: a
            input: two
        """,
    )
    problem = only_problem(path)
    assert problem.line == 4
    assert problem.message == "duplicate case id `a` (first used on line 2)"
    assert "its own `id`" in problem.fix


def test_an_empty_suite_is_a_problem(write: Write) -> None:
    problem = only_problem(write("s.yaml", "suite: nothing\ncases: []\n"))
    assert problem.message == "the suite has no cases"
    assert problem.line == 2
    assert "`cases:`" in problem.fix


def test_an_empty_file_is_an_empty_suite(write: Write) -> None:
    assert only_problem(write("s.yaml", "# nothing yet\n")).message == "the suite has no cases"


def test_every_problem_in_a_file_is_reported_in_line_order(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        suite: many
        gate: {min_pass_rate: 1.5}
        cases:
          - id: a
            input: hi
            repeats: 0
          - id: b
            priority: P9
            input: hi
          - id: c
            turns: [hi]
            assertions:
              - type: contain
                value: x
          - id: a
            input: again
        """,
    )
    problems = problems_in(path)
    assert [p.line for p in problems] == [2, 6, 8, 13, 15]
    assert all(p.fix for p in problems)
    assert "`gate.min_pass_rate` must be a number from 0 to 1, got 1.5" == problems[0].message


def test_a_problem_in_the_defaults_is_reported_once_at_the_defaults(write: Write) -> None:
    path = write(
        "s.yaml",
        """
        defaults:
          repeats: many
          contxt: {}
        cases:
          - {id: a, input: x}
          - {id: b, input: y}
        """,
    )
    first, second = problems_in(path)
    assert (first.line, first.message) == (2, "`repeats` must be a whole number >= 1, got 'many'")
    assert (second.line, second.message) == (
        3,
        "unknown field `contxt` in `defaults`; did you mean `context`?",
    )


def test_an_id_in_the_defaults_is_refused(write: Write) -> None:
    path = write("s.yaml", "defaults: {id: x}\ncases:\n  - {id: a, input: x}\n")
    assert "every case needs its own" in only_problem(path).message


def test_unknown_suite_level_key_suggests_the_known_one(write: Write) -> None:
    path = write("s.yaml", "suite: s\nrubric: {}\ncases:\n  - {id: a, input: x}\n")
    problem = only_problem(path)
    assert problem.line == 2
    assert problem.message == "unknown field `rubric`; did you mean `rubrics`?"


def test_a_key_written_twice_is_reported(write: Write) -> None:
    path = write("s.yaml", "cases:\n  - id: a\n    input: one\n    input: two\n")
    problem = only_problem(path)
    assert problem.line == 4
    assert "written twice" in problem.message and "line 3" in problem.message


def test_a_case_that_is_not_a_mapping_is_a_problem(write: Write) -> None:
    problem = only_problem(write("s.yaml", "cases:\n  - just text\n"))
    assert problem.line == 2
    assert problem.message == "case 1 must be a mapping of fields, got str"


def test_a_file_that_is_not_utf8_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "gbk.yaml"
    path.write_bytes("cases:\n  - {id: a, input: 你好}\n".encode("gbk"))
    problem = only_problem(path)
    assert "not UTF-8" in problem.message
    assert "UTF-8" in problem.fix


def test_validate_paths_reads_the_suite_files_of_a_folder(write: Write, tmp_path: Path) -> None:
    write("suites/good.yaml", "cases:\n  - {id: a, input: x}\n")
    write("suites/bad.jsonl", '{"id": "a"}\n')
    write("suites/notes.txt", "not a suite\n")
    write("suites/seatrial.yaml", "project: p\n")
    write("suites/fixtures/ws/data.json", '{"not": "a case"}\n')
    problems = validate_paths([tmp_path / "suites", tmp_path / "missing.yaml"])
    assert [(Path(p.path).name, p.line) for p in problems] == [
        ("bad.jsonl", 1),
        ("missing.yaml", None),
    ]
    assert problems[1].message == "file not found"


def test_validate_paths_of_good_files_is_empty(write: Write) -> None:
    assert validate_paths([write("s.yaml", "cases:\n  - {id: a, input: x}\n")]) == []
