"""One parse per YAML file: libyaml's C loader when present, the same data, lines and errors."""

from __future__ import annotations

import pytest
import yaml

from seatrial.case import _yaml, parse_yaml

SUITE = """\
suite: s
defaults:
  tags: [p1]
cases:
  - id: a
    input: "hello: there"
    assertions:
      - {type: contains, value: x}
  - id: b
    turns:
      - user: one
      - user: two
    metadata: &meta
      when: 2024-01-02
      count: 3
  - id: c
    input: hi
    metadata: *meta
"""

needs_libyaml = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")


@pytest.fixture
def pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse with PyYAML's pure-Python loader only, as where libyaml is missing."""
    monkeypatch.setattr(_yaml, "FAST_LOADER", yaml.SafeLoader)


@needs_libyaml
def test_the_c_loader_is_used_when_pyyaml_has_libyaml() -> None:
    assert _yaml.FAST_LOADER is yaml.CSafeLoader


def test_the_data_is_what_safe_load_reads() -> None:
    assert parse_yaml(SUITE, "s.yaml").data == yaml.safe_load(SUITE)


def test_the_lines_are_the_same_with_either_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = parse_yaml(SUITE, "s.yaml")
    monkeypatch.setattr(_yaml, "FAST_LOADER", yaml.SafeLoader)
    pure = parse_yaml(SUITE, "s.yaml")
    assert fast.data == pure.data
    assert fast.locator.lines == pure.locator.lines
    assert fast.locator.lines[("cases", 1, "turns", 1)] == 12
    assert fast.locator.lines[("cases", 2, "metadata")] == 18


@pytest.mark.usefixtures("pure_python")
def test_the_pure_python_loader_alone_reads_the_same_file() -> None:
    document = parse_yaml(SUITE, "s.yaml")
    assert document.data == yaml.safe_load(SUITE)
    assert document.locator.lines[("cases", 1, "turns", 1)] == 12


def test_a_key_written_twice_is_found_in_the_single_parse() -> None:
    document = parse_yaml("a: 1\nb: 2\na: 3\n", "s.yaml")
    (problem,) = document.problems
    assert problem.line == 3
    assert "also on line 1" in problem.message
    assert document.data == {"a": 3, "b": 2}


def test_a_syntax_error_has_the_same_wording_and_line_with_either_loader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = 'cases:\n  - id: a\n    input: "unclosed\n  - id: b\n'
    fast = parse_yaml(text, "s.yaml").problems
    monkeypatch.setattr(_yaml, "FAST_LOADER", yaml.SafeLoader)
    pure = parse_yaml(text, "s.yaml").problems
    assert fast == pure
    assert fast[0].line == 3


def test_two_documents_in_one_file_are_a_problem() -> None:
    (problem,) = parse_yaml("a: 1\n---\nb: 2\n", "s.yaml").problems
    assert problem.line == 2
    assert "single document" in problem.message


def test_an_empty_file_holds_no_data_and_no_problem() -> None:
    document = parse_yaml("", "s.yaml")
    assert document.data is None
    assert document.problems == []


@pytest.mark.parametrize("depth", [5_000, 50])
def test_nesting_is_read_or_refused_without_a_crash(depth: int) -> None:
    document = parse_yaml("[" * depth + "]" * depth, "s.yaml")
    if depth == 50:
        assert document.problems == []
    else:
        (problem,) = document.problems
        assert problem.path == "s.yaml"
        assert "YAML" in problem.message


@pytest.mark.usefixtures("pure_python")
def test_nesting_deeper_than_the_stack_is_a_problem_without_libyaml() -> None:
    (problem,) = parse_yaml("[" * 5_000 + "]" * 5_000, "s.yaml").problems
    assert "too deeply" in problem.message
