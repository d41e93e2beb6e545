"""JSONL suites: one case per line, an optional head line, errors on the right line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.case import load_suite
from seatrial.errors import SuiteError

Write = Callable[[str, str], Path]


def test_each_line_is_a_case_and_the_suite_is_named_after_the_file(write: Write) -> None:
    lines = [
        {"id": "refund-1", "input": "我要退款", "category": "退款"},
        {"id": "invoice-1", "turns": ["开发票", {"role": "user", "content": "公司抬头"}]},
    ]
    path = write("golden.jsonl", "\n".join(json.dumps(x, ensure_ascii=False) for x in lines))
    suite = load_suite(path)
    assert suite.name == "golden"
    assert [case.id for case in suite.cases] == ["refund-1", "invoice-1"]
    assert suite.cases[1].user_turns == ["开发票", "公司抬头"]


def test_a_first_line_with_suite_keys_names_the_suite_and_gives_defaults(write: Write) -> None:
    path = write(
        "x.jsonl",
        '{"suite": "refunds", "defaults": {"repeats": 5, "context": {"channel": "eval"}}}\n'
        '{"id": "a", "input": "hi"}\n'
        "\n"
        '{"id": "b", "input": "hi", "repeats": 2, "context": {"user_id": "u1"}}\n',
    )
    suite = load_suite(path)
    assert suite.name == "refunds"
    a, b = suite.cases
    assert a.repeats == 5
    assert b.repeats == 2
    assert b.context == {"channel": "eval", "user_id": "u1"}


def test_bad_json_names_its_line_and_the_other_lines_are_still_checked(write: Write) -> None:
    path = write(
        "x.jsonl",
        '{"id": "a", "input": "hi"}\n'
        '{"id": "b", "input": "hi",}\n'
        '{"id": "c", "input": "hi", "repeats": "three"}\n',
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    problems = caught.value.problems
    assert [p.line for p in problems] == [2, 3]
    assert problems[0].message.startswith("invalid JSON")
    assert "trailing comma" in problems[0].fix
    assert problems[1].message == "case `c`: `repeats` must be a whole number >= 1, got 'three'"


def test_a_line_that_is_not_an_object_is_a_problem_on_that_line(write: Write) -> None:
    path = write("x.jsonl", '{"id": "a", "input": "hi"}\n["not", "a", "case"]\n')
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    (problem,) = caught.value.problems
    assert problem.line == 2
    assert "one JSON object" in problem.message


def test_an_empty_jsonl_file_is_an_empty_suite_problem(write: Write) -> None:
    path = write("empty.jsonl", "\n\n")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    (problem,) = caught.value.problems
    assert problem.message == "the suite has no cases"
    assert "one case per line" in problem.fix
