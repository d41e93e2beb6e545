"""Assertions are checked once, against the registry leaf: the loader and evaluate agree.

``seatrial.case`` reads the assertion registry from ``seatrial.registry`` and never imports
``seatrial.assertion`` (which imports it); the built-in types still reach the loader.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from seatrial.assertion import evaluate
from seatrial.case import AssertionSpec, Case, check_assertion, load_suite
from seatrial.errors import Problem, SuiteError

from ..assertion._traces import context

Write = Callable[[str, str], Path]

BAD_SUITE = """
cases:
  - id: a
    input: hi
    assertions:
      - type: tool_caled
        expected: search
      - type: tool_called
        expected: search
        expectd: search
"""


def _fresh_python(code: str) -> str:
    """Run ``code`` in a new interpreter (nothing of Seatrial imported yet); its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_importing_the_case_package_does_not_import_the_assertions():
    out = _fresh_python(
        """
        import sys
        import seatrial.case
        print(sorted(m for m in sys.modules if m.startswith("seatrial.assertion")))
        """
    )
    assert out.strip() == "[]"


def test_the_loader_knows_every_built_in_type_before_anything_imports_the_assertions(
    tmp_path: Path,
):
    suite = tmp_path / "s.yaml"
    suite.write_text(BAD_SUITE.lstrip("\n"), encoding="utf-8")
    out = _fresh_python(
        f"""
        from seatrial.case import load_suite
        from seatrial.errors import SuiteError
        try:
            load_suite({str(suite)!r})
        except SuiteError as exc:
            print(exc.problems[0].message)
        """
    )
    assert out.startswith(
        "case `a`: unknown assertion type `tool_caled`; did you mean `tool_called`?"
    )
    assert "llm_judge" in out  # the list of known types holds the built-ins


def _loaded_problems(path: Path) -> list[Problem]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return caught.value.problems


def _evaluated_problems() -> list[Problem]:
    case = Case(
        id="a",
        input="hi",
        assertions=[
            AssertionSpec.model_validate({"type": "tool_caled", "expected": "search"}),
            AssertionSpec.model_validate(
                {"type": "tool_called", "expected": "search", "expectd": "search"}
            ),
        ],
    )
    with pytest.raises(SuiteError) as caught:
        evaluate(case, context(case=case))
    return caught.value.problems


def test_a_case_built_in_code_gets_the_loaders_messages_and_fixes(write: Write):
    loaded = _loaded_problems(write("s.yaml", BAD_SUITE))
    evaluated = _evaluated_problems()

    assert [p.message.removeprefix("case `a`: ") for p in loaded] == [p.message for p in evaluated]
    assert [p.fix for p in loaded] == [p.fix for p in evaluated]
    assert evaluated[1].message == (
        "assertion `tool_called`: unknown parameter `expectd`; did you mean `expected`?"
    )


def test_evaluate_names_the_case_and_the_assertion_in_place_of_a_line():
    evaluated = _evaluated_problems()
    assert [p.path for p in evaluated] == ["case `a`, assertion 1", "case `a`, assertion 2"]
    assert str(evaluated[0]).startswith(
        "case `a`, assertion 1: unknown assertion type `tool_caled`; did you mean `tool_called`?"
    )


def test_check_assertion_gives_the_type_and_parameters_of_a_valid_one():
    checked = check_assertion("final_state", {"check": "order", "expected": "ORD1"})
    assert checked.problems == []
    assert checked.kind is not None and checked.kind.name == "side_effect"
    assert checked.params is not None


def test_check_assertion_gives_no_parameters_when_one_is_wrong():
    checked = check_assertion("no_loop", {"max_repeats": "often"})
    assert checked.kind is not None and checked.params is None
    ((loc, message, fix),) = checked.problems
    assert loc == ("max_repeats",)
    assert message.startswith("assertion `no_loop`: `max_repeats`")
    assert fix


def test_threads_asking_at_once_all_wait_for_the_whole_table():
    out = _fresh_python(
        """
        import threading
        from seatrial.registry import lookup

        start = threading.Barrier(8)
        answers = []

        def ask():
            start.wait()
            try:
                answers.append(lookup("tool_called").name)
            except KeyError as exc:
                answers.append(f"KeyError {exc}")

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(sorted(answers))
        """
    )
    assert out.strip() == str(["tool_called"] * 8)
