"""Suite files at volume: whatever a file holds, loading it gives a suite or a SuiteError.

A malformed file never escapes as another exception (a crash, exit code 3): every problem
names the file, and one whose place is known names a line inside the file. A valid suite,
written any way YAML or JSON allows, still loads with its cases as written.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from seatrial.case import Suite, load_suite, validate_paths
from seatrial.errors import SuiteError

VALID_SUITE = """\
suite: refunds
defaults:
  category: refund
  limits: {tool_calls: 5}
cases:
  - id: refund-1
    input: I want a refund for order A1001
    assertions:
      - type: tool_called
        expected: refund_order
      - type: contains
        value: refund
  - id: refund-2
    turns:
      - role: user
        content: where is my order?
      - role: user
        content: cancel it
    assertions:
      - {type: regex, value: "cancel(l)?ed"}
"""

# JSON-like values: what any YAML or JSON document may hold once parsed.
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
# Keys a suite or a case really has, so generated documents reach deep into validation
# instead of stopping at "unknown field".
SUITE_KEYS = ["suite", "defaults", "cases", "rubrics", "gate", "agent", "gates", "probe", "dataset"]
CASE_KEYS = [
    "id",
    "input",
    "turns",
    "task",
    "assertions",
    "limits",
    "context",
    "permissions",
    "metadata",
    "category",
    "priority",
    "tags",
    "fixture",
    "env",
    "repeats",
    "threshold",
]
ASSERTION_KEYS = [
    "type",
    "level",
    "expected",
    "value",
    "pattern",
    "tool",
    "params",
    "must_pass",
    "weight",
    "criteria",
    "max",
    "min",
]
assertions_like = st.dictionaries(st.sampled_from(ASSERTION_KEYS), json_values, max_size=4)
cases_like = st.dictionaries(
    st.sampled_from(CASE_KEYS),
    json_values | st.lists(assertions_like, max_size=3),
    max_size=6,
)
suites_like = st.dictionaries(
    st.sampled_from(SUITE_KEYS),
    json_values | st.lists(cases_like, max_size=3) | cases_like,
    max_size=5,
)
documents = json_values | suites_like | st.lists(cases_like, max_size=3) | cases_like


def load_or_problems(path: Path) -> Suite | SuiteError:
    """The suite, or the SuiteError; any other exception fails the test as a crash."""
    try:
        suite = load_suite(path)
    except SuiteError as error:
        assert_well_formed(error, path)
        # `seatrial validate` reads files the same way and must say the same.
        assert validate_paths([path]) == error.problems
        return error
    assert validate_paths([path]) == []
    return suite


def assert_well_formed(error: SuiteError, path: Path) -> None:
    # Every line break an editor or YAML may count: \r, \r\n, U+0085, U+2028 ...
    lines = len(path.read_bytes().decode("utf-8", "replace").splitlines()) + 1
    assert error.problems, "a SuiteError must say what is wrong"
    for problem in error.problems:
        assert problem.path == str(path)
        assert problem.message.strip()
        assert problem.line is None or 1 <= problem.line <= lines, problem


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@given(document=documents)
def test_any_yaml_document_loads_or_gives_a_suite_error(tmp_path, document):
    path = write(tmp_path, "suite.yaml", yaml.safe_dump(document, allow_unicode=True))

    load_or_problems(path)


@given(document=documents)
def test_any_json_document_loads_or_gives_a_suite_error(tmp_path, document):
    path = write(tmp_path, "suite.json", json.dumps(document, ensure_ascii=False, indent=2))

    load_or_problems(path)


@given(lines=st.lists(documents, max_size=5))
def test_any_jsonl_lines_load_or_give_a_suite_error(tmp_path, lines):
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)

    load_or_problems(write(tmp_path, "suite.jsonl", text))


@given(text=st.text(max_size=300))
@pytest.mark.parametrize("name", ["suite.yaml", "suite.json", "suite.jsonl"])
def test_any_text_loads_or_gives_a_suite_error(tmp_path, name, text):
    load_or_problems(write(tmp_path, name, text))


@given(data=st.binary(max_size=200))
@pytest.mark.parametrize("name", ["suite.yaml", "suite.jsonl", "suite.xlsx"])
def test_any_bytes_load_or_give_a_suite_error(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)

    load_or_problems(path)


# A mutation of the valid suite: (where, how, what). Positions are taken modulo the text's
# length, so any generated number names a place in it.
mutations = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=10_000),
        st.sampled_from(["insert", "delete_line", "duplicate_line", "replace_char", "cut"]),
        st.sampled_from(
            [
                " ",
                "  ",
                "\t",
                ":",
                "- ",
                "#",
                "&a ",
                "*a",
                "!!python/object ",
                "'",
                '"',
                "{",
                "[",
                "]",
                "}",
                "\n",
                "---\n",
                "%YAML 1.1\n",
                "\x00",
                "\ufeff",
                "? ",
                "|",
                ">",
            ]
        )
        | st.text(max_size=5),
    ),
    min_size=1,
    max_size=4,
)


def mutate(text: str, steps: list[tuple[int, str, str]]) -> str:
    for at, how, what in steps:
        at %= max(len(text), 1)
        lines = text.splitlines(keepends=True)
        line = at % max(len(lines), 1)
        if how == "insert":
            text = text[:at] + what + text[at:]
        elif how == "delete_line" and lines:
            text = "".join(lines[:line] + lines[line + 1 :])
        elif how == "duplicate_line" and lines:
            text = "".join(lines[: line + 1] + lines[line:])
        elif how == "replace_char":
            text = text[:at] + what + text[at + 1 :]
        elif how == "cut":
            text = text[:at]
    return text


@given(steps=mutations)
def test_a_mutated_suite_loads_or_gives_a_suite_error(tmp_path, steps):
    load_or_problems(write(tmp_path, "suite.yaml", mutate(VALID_SUITE, steps)))


def test_the_suite_the_mutations_start_from_is_valid(tmp_path):
    suite = load_suite(write(tmp_path, "suite.yaml", VALID_SUITE))

    assert [case.id for case in suite.cases] == ["refund-1", "refund-2"]


case_ids = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True)
# Printable text without line breaks: PyYAML's emitter folds a plain scalar at U+0085 and
# U+2028, so the round trip would fail before Seatrial reads a thing.
messages = (
    st.text(
        st.characters(exclude_categories=["Cc", "Cs", "Zl", "Zp"], exclude_characters="\x85"),
        min_size=1,
        max_size=40,
    )
    .map(str.strip)
    .filter(bool)
)


@given(
    cases=st.dictionaries(case_ids, messages, min_size=1, max_size=6),
    style=st.sampled_from(["block", "flow", "json", "jsonl", "list"]),
)
def test_a_valid_suite_loads_with_its_cases_whatever_the_style(tmp_path, cases, style):
    written = [
        {"id": case_id, "input": text, "assertions": [{"type": "contains", "value": text}]}
        for case_id, text in cases.items()
    ]
    document: Any = {"suite": "generated", "cases": written}
    if style == "block":
        path = write(tmp_path, "suite.yaml", yaml.safe_dump(document, allow_unicode=True))
    elif style == "flow":
        text = yaml.safe_dump(document, allow_unicode=True, default_flow_style=True)
        path = write(tmp_path, "suite.yaml", text)
    elif style == "json":
        path = write(tmp_path, "suite.json", json.dumps(document, ensure_ascii=False))
    elif style == "jsonl":
        text = "\n".join(json.dumps(case, ensure_ascii=False) for case in written)
        path = write(tmp_path, "suite.jsonl", text)
    else:
        path = write(tmp_path, "suite.yaml", yaml.safe_dump(written, allow_unicode=True))

    suite = load_suite(path)

    assert [(case.id, case.input) for case in suite.cases] == list(cases.items())


cells = (
    st.none() | st.text(max_size=15) | st.integers() | st.floats(allow_nan=False) | st.booleans()
)
HEADERS = [
    "Question",
    "ID",
    "Expected Tool",
    "Expected Skill",
    "Expected Result",
    "Expected Task",
    "Tags",
    "Priority",
    "Questoin",
    "Category",
    "",
]


@settings(max_examples=25)
@given(
    header=st.lists(st.sampled_from(HEADERS) | st.text(max_size=10), max_size=6),
    rows=st.lists(st.lists(cells, max_size=6), max_size=5),
)
def test_any_workbook_loads_or_gives_a_suite_error(tmp_path, header, rows):
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in [header, *rows]:
        sheet.append([_cell_safe(value) for value in row])
    path = tmp_path / "suite.xlsx"
    workbook.save(path)

    load_or_problems(path)


def _cell_safe(value: Any) -> Any:
    # openpyxl refuses control characters in cells: Excel cannot hold them either.
    if isinstance(value, str):
        return "".join(ch for ch in value if ch.isprintable())
    return value


def workbook_bytes() -> bytes:
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    for row in [["Question", "ID", "Expected Tool"], ["refund A1001", "refund-1", "refund"]]:
        workbook.active.append(row)
    saved = io.BytesIO()
    workbook.save(saved)
    return saved.getvalue()


@settings(max_examples=40)
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=100_000), st.integers(0, 255)),
        min_size=1,
        max_size=3,
    )
)
def test_a_damaged_workbook_gives_a_suite_error(tmp_path, edits):
    # Overwritten bytes land in the zip's headers, its deflated parts or the XML inside;
    # zlib.error and EOFError from a damaged part used to escape as crashes.
    damaged = bytearray(workbook_bytes())
    for at, value in edits:
        damaged[at % len(damaged)] = value
    path = tmp_path / "suite.xlsx"
    path.write_bytes(bytes(damaged))

    load_or_problems(path)


@settings(max_examples=10)
@given(
    depth=st.sampled_from([1, 99, 100, 101, 300, 990, 5_000]),
    where=st.sampled_from(["metadata", "context", "defaults"]),
    name=st.sampled_from(["suite.yaml", "suite.json", "suite.jsonl"]),
)
def test_a_suite_nested_deeper_than_it_can_be_stored_gives_a_suite_error(
    tmp_path, depth, where, name
):
    # Nesting a few hundred levels deep used to load, then fail the run while it was stored
    # (exit code 3); deeper, json.loads' RecursionError escaped the loader.
    case: dict[str, Any] = {"id": "a", "input": "hi"}
    head: dict[str, Any] = {}
    if where == "defaults":
        head["defaults"] = {"metadata": {"m": "NESTED"}}
    else:
        case[where] = {"m": "NESTED"}
    if name == "suite.jsonl":
        lines = [head, case] if head else [case]
        document = "\n".join(json.dumps(line) for line in lines)
    else:
        document = json.dumps({**head, "cases": [case]})
    nested = "[" * depth + "1" + "]" * depth
    found = load_or_problems(write(tmp_path, name, document.replace('"NESTED"', nested)))

    if depth < 100:
        assert isinstance(found, Suite)
    elif depth > 100:
        assert isinstance(found, SuiteError)


@given(
    value=st.sampled_from(
        ["9" * 5_000, "-" + "9" * 4_301, "1e400", "-1e400", "NaN", "Infinity", ".inf", ".nan"]
    ),
    name=st.sampled_from(["suite.yaml", "suite.json", "suite.jsonl"]),
)
def test_a_number_python_cannot_hold_loads_or_gives_a_suite_error(tmp_path, value, name):
    # A 5,000-digit integer raised a bare ValueError (int_max_str_digits) out of the loader.
    document = json.dumps({"id": "a", "input": "hi", "metadata": {"m": "VALUE"}})
    if name != "suite.jsonl":
        document = json.dumps({"cases": ["CASE"]}).replace('"CASE"', document)
    load_or_problems(write(tmp_path, name, document.replace('"VALUE"', value)))
