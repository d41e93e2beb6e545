"""promptfoo's own test cases, run through Seatrial's assertion path under promptfoo's names.

A suite written for promptfoo must get promptfoo's verdicts. Each row below restates one case
of promptfoo's test suite (its input, the assertion, the expected verdict) and runs it as a
Seatrial case would: a ``Case`` holding the promptfoo-named assertion, planned and evaluated by
``seatrial.assertion.evaluate`` (``evaluate_async`` with a judge). A row with ``on_purpose``
is one where Seatrial decides otherwise by design; it asserts Seatrial's verdict and says why,
and docs/cases.md ("promptfoo compatibility") explains the difference to users.

Ported from github.com/promptfoo/promptfoo (cases rewritten as data, not copied code):

- ``contains``: test/assertions/contains.test.ts at 0cc2e63c79f89e158ef1aa617160a8c2aee447aa,
  behaviour from src/assertions/contains.ts at 01ae5a73aeacf402c1b786e709a25cbb07f0f2a1 and
  src/util/parseCommaSeparatedValues.ts at b1ec335c13fbeef587f71550c68115b86796655c. Two
  cases are not ported: they count JavaScript ``toString`` calls on sparse arrays, which a
  YAML value cannot hold.
- ``icontains``, ``contains-multi``, ``not-contains``, ``regex``, ``starts-with``,
  ``is-json``: test/assertions/<name>.test.ts at 299310697b6e985c934b409ccec29a7c5e5da49a
  (``is-json`` reads a ``file://`` schema there: see its on-purpose row).
- ``equals``: test/assertions/equals.test.ts at 1943aea13d090854dd5ffb963c196cbe1287fb4a,
  behaviour from src/assertions/equals.ts at 08dbe153151ec9d8d2c75a99c335aa98bc0df053 (the
  cases about stored comparison metadata are not ported: Seatrial stores no such field).
- schema ``format``: src/assertions/json.ts at 01f79c788baa78059feba05fb2db22ff3e89cee1 uses
  ajv with ajv-formats; the formats' meaning from ajv-validator/ajv-formats src/formats.ts at
  12aba4c9e958786ea4ebf6a00e99e3b0550967c7.
- ``similar``: test/assertions/similar.test.ts at 093f19532a51e605938a6bdb72f8c656cd8b65e4
  (promptfoo mocks the embeddings as 1 for equal texts and 0 otherwise; here the bundled model
  scores them, and identical texts score 1).
- ``llm-rubric``: test/assertions/llm-rubric.test.ts at
  0f19518930039a16bcdd4ba262ea41c0542767fa; ``factuality``: test/matchers/factuality.test.ts
  at 00e33355e41ba4d24c67a2ebe0e49f7d38be2bb0. The judge is scripted on a FakeOpenAI server
  called through a real Gateway; no test calls a model API.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from seatrial.assertion import AssertionContext, aliases, evaluate, evaluate_async, lookup
from seatrial.case import AssertionSpec, Case, load_suite
from seatrial.errors import SuiteError
from seatrial.gateway import Gateway, GatewayConfig
from seatrial.judge import Calibration, Judge, JudgeSettings, judge_trust
from seatrial.run import JudgeRuntime
from seatrial.testing import FakeOpenAI
from tests.gateway.conftest import model_for

from ._traces import TraceBuilder, context

Expect = Literal["pass", "fail", "invalid"]

CONTAINS = "test/assertions/contains.test.ts"
ICONTAINS = "test/assertions/icontains.test.ts"
MULTI = "test/assertions/contains-multi.test.ts"
NOT_CONTAINS = "test/assertions/not-contains.test.ts"
REGEX = "test/assertions/regex.test.ts"
STARTS_WITH = "test/assertions/starts-with.test.ts"
EQUALS = "test/assertions/equals.test.ts"
IS_JSON = "test/assertions/is-json.test.ts"
FORMATS = "ajv-formats src/formats.ts"
SIMILAR = "test/assertions/similar.test.ts"
LLM_RUBRIC = "test/assertions/llm-rubric.test.ts"
FACTUALITY = "test/matchers/factuality.test.ts"


@dataclass(frozen=True)
class Row:
    """One promptfoo case: the assertion, the agent's reply, and the verdict it must get."""

    source: str
    type: str
    params: dict[str, Any]
    output: str
    expect: Expect
    reason_has: str | None = None
    """Text the result's reason (or, for ``invalid``, the load error) must contain."""
    on_purpose: str | None = None
    """Why Seatrial's verdict differs from promptfoo's; None where they agree."""


NO_VALUE = object()
"""The assertion has no ``value`` key at all (unlike ``value: null``)."""


def row(source: str, kind: str, value: Any, output: str, expect: Expect, **more: Any) -> Row:
    extra = {k: more.pop(k) for k in list(more) if k not in ("reason_has", "on_purpose")}
    params = ({} if value is NO_VALUE else {"value": value}) | extra
    return Row(source, kind, params, output, expect, **more)


QUOTED_ESCAPES = '"hello\\"world,test", "another,test"'
SAY_HELLO = '"say \\"hello\\"", "another,phrase"'
OPTIONS = ["option1", "option2", "option3"]

TEXT_ROWS: list[Row] = [
    # contains / icontains, plain and numeric
    row(CONTAINS, "contains", "world", "hello world", "pass"),
    row(CONTAINS, "contains", "universe", "hello world", "fail", reason_has='"universe"'),
    row(CONTAINS, "not-contains", "universe", "hello world", "pass"),
    row(CONTAINS, "contains", NO_VALUE, "hello world", "invalid", reason_has="value"),
    row(CONTAINS, "icontains", "WORLD", "hello world", "pass"),
    row(CONTAINS, "icontains", "WoRlD", "Hello WORLD", "pass"),
    row(CONTAINS, "contains", 0, "There are 0 errors", "pass"),
    row(CONTAINS, "contains", 0, "no digits here", "fail"),
    row(CONTAINS, "icontains", 0, "There are 0 errors", "pass"),
    row(CONTAINS, "icontains", 0, "no digits here", "fail"),
    row(CONTAINS, "contains", float("nan"), "NaN", "invalid", reason_has="NaN"),
    row(CONTAINS, "icontains", float("nan"), "NaN", "invalid", reason_has="NaN"),
    row(CONTAINS, "contains", float("inf"), "Infinity", "pass"),
    row(CONTAINS, "contains", float("-inf"), "-Infinity", "pass"),
    row(CONTAINS, "icontains", float("inf"), "Infinity", "pass"),
    # contains-any: a list, and one string read by the CSV rules
    row(CONTAINS, "contains-any", ["world", "universe"], "hello world", "pass"),
    row(CONTAINS, "contains-any", "world,universe", "hello world", "pass"),
    row(CONTAINS, "contains-any", '"hello, world",universe', "hello, world", "pass"),
    row(
        CONTAINS,
        "contains-any",
        '"hello, dear world", "goodbye, universe", simple',
        "hello, dear world is here",
        "pass",
    ),
    row(CONTAINS, "contains-any", '"",', "", "pass"),
    row(CONTAINS, "contains-any", '"hello, world"\t,foo', "zzz", "fail"),
    row(CONTAINS, "contains-any", '"hello, world"\t,\t"foo"', "foo", "pass"),
    row(CONTAINS, "contains-any", '"a""b",c', 'a"b', "pass"),
    row(CONTAINS, "contains-any", '"a""b",c', "b", "fail"),
    row(CONTAINS, "contains-any", QUOTED_ESCAPES, 'hello"world,test', "pass"),
    row(CONTAINS, "contains-any", QUOTED_ESCAPES, "another,test", "pass"),
    row(CONTAINS, "contains-any", QUOTED_ESCAPES, "something completely different", "fail"),
    row(CONTAINS, "contains-any", '""', "test", "pass"),
    row(CONTAINS, "contains-any", '"test"', "test", "pass"),
    row(CONTAINS, "contains-any", '"test\\test"', "test\\test", "pass"),
    row(CONTAINS, "contains-any", '"test\\\\test"', "test\\test", "pass"),
    row(CONTAINS, "contains-any", '"test', "test", "invalid", reason_has="never closed"),
    row(
        CONTAINS,
        "contains-any",
        '"hello"world',
        "hello world",
        "invalid",
        reason_has="after the closing quote",
    ),
    row(
        CONTAINS,
        "contains-any",
        '"hello" world',
        "hello world",
        "invalid",
        reason_has="put a comma between values",
    ),
    # icontains-any
    row(CONTAINS, "icontains-any", QUOTED_ESCAPES, "ANOTHER,TEST", "pass"),
    row(CONTAINS, "icontains-any", '"hello, world",universe', "HELLO, WORLD", "pass"),
    row(CONTAINS, "icontains-any", ["WORLD", "UNIVERSE"], "hello world", "pass"),
    row(CONTAINS, "icontains-any", "WORLD,UNIVERSE", "hello world", "pass"),
    row(CONTAINS, "icontains-any", "HELLO,  WORLD  ,  UNIVERSE", "hello", "pass"),
    row(CONTAINS, "icontains-any", ",WORLD,,", "", "fail", reason_has='["WORLD"]'),
    row(CONTAINS, "icontains-any", '"",WORLD', "", "pass"),
    row(CONTAINS, "icontains-any", "  HELLO  ", "hello", "pass"),
    row(CONTAINS, "icontains-any", "HELLO  ,  WORLD", "hello", "pass"),
    row(CONTAINS, "icontains-any", "  HELLO  ,  WORLD  ", "hello", "pass"),
    row(CONTAINS, "icontains-any", "  HELLO  ,  ,  WORLD  ", "hello", "pass"),
    row(CONTAINS, "icontains-any", "HELLO,,,,WORLD", "hello", "pass"),
    row(
        CONTAINS,
        "icontains-any",
        "  ,  ,  ",
        "",
        "invalid",
        reason_has="names no text to look for",
        on_purpose=(
            "promptfoo runs the case and fails it (any of no values); a value that names "
            "nothing is a mistake in the suite, so Seatrial reports it when the case is loaded"
        ),
    ),
    # contains-all and icontains-all
    row(CONTAINS, "contains-all", '"hello, world","foo"', "hello, world and foo", "pass"),
    row(CONTAINS, "contains-all", '"hello, world","bar"', "hello, world and foo", "fail"),
    row(CONTAINS, "contains-all", "hello", "hello world", "pass"),
    row(CONTAINS, "contains-all", SAY_HELLO, 'say "hello" and another,phrase here', "pass"),
    row(CONTAINS, "contains-all", '"say \\"hello\\"", "missing,value"', 'say "hello" only', "fail"),
    row(CONTAINS, "contains-all", ["hello", "world"], "hello world", "pass"),
    row(
        CONTAINS,
        "contains-all",
        ["hello", "world", "universe"],
        "hello world",
        "fail",
        reason_has='["universe"] not found',
    ),
    row(CONTAINS, "icontains-all", SAY_HELLO, 'SAY "HELLO" AND ANOTHER,PHRASE HERE', "pass"),
    row(CONTAINS, "icontains-all", '"Hello, World","Foo"', "HELLO, WORLD AND FOO", "pass"),
    row(CONTAINS, "icontains-all", '""', "hello", "pass"),
    row(CONTAINS, "icontains-all", ["HELLO", "WORLD"], "hello world", "pass"),
    row(CONTAINS, "icontains-all", ["HELLO", "WORLD", "UNIVERSE"], "hello world", "fail"),
    row(CONTAINS, "icontains-all", ["HeLLo", "WoRLD"], "HELLO world", "pass"),
    # the older per-type files
    row(ICONTAINS, "icontains", "expected output", "EXPECTED OUTPUT", "pass"),
    row(ICONTAINS, "icontains", "expected output", "Different output", "fail"),
    row(ICONTAINS, "not-icontains", "unexpected output", "Expected output", "pass"),
    row(ICONTAINS, "not-icontains", "unexpected output", "UNEXPECTED OUTPUT", "fail"),
    row(ICONTAINS, "icontains-any", OPTIONS, "This output contains OPTION1", "pass"),
    row(ICONTAINS, "icontains-any", OPTIONS, "This output does not contain any option", "fail"),
    row(
        ICONTAINS,
        "icontains-all",
        OPTIONS,
        "This output contains OPTION1, option2, and opTiOn3",
        "pass",
    ),
    row(
        ICONTAINS, "icontains-all", OPTIONS, "This output contains only OPTION1 and option2", "fail"
    ),
    row(MULTI, "contains-any", OPTIONS, "This output contains option1", "pass"),
    row(MULTI, "contains-any", OPTIONS, "This output does not contain any option", "fail"),
    row(
        MULTI, "contains-all", OPTIONS, "This output contains option1, option2, and option3", "pass"
    ),
    row(MULTI, "contains-all", OPTIONS, "This output contains only option1 and option2", "fail"),
    row(NOT_CONTAINS, "not-contains", "unexpected content", "Expected output without it", "pass"),
    row(
        NOT_CONTAINS,
        "not-contains",
        "unexpected content",
        "This contains unexpected content in the middle",
        "fail",
    ),
    row(REGEX, "regex", r"\d{3}-\d{2}-\d{4}", "This output contains 123-45-6789", "pass"),
    row(REGEX, "regex", r"\d{3}-\d{2}-\d{4}", "This output does not contain the pattern", "fail"),
    row(REGEX, "not-regex", r"\d{3}-\d{2}-\d{4}", "This output does not contain it", "pass"),
    row(REGEX, "not-regex", r"\d{3}-\d{2}-\d{4}", "This output contains 123-45-6789", "fail"),
    row(STARTS_WITH, "starts-with", "Expected", "Expected output", "pass"),
    row(STARTS_WITH, "starts-with", "Expected", "Different output", "fail"),
    # equals / not-equals: an object value compares parsed JSON, anything else the text
    row(EQUALS, "equals", {"foo": "bar"}, "hello world", "fail", reason_has="is not JSON"),
    row(EQUALS, "not-equals", {"foo": "bar"}, "hello world", "pass"),
    row(EQUALS, "equals", {"foo": "bar"}, '{"foo":"bar"}', "pass"),
    row(EQUALS, "equals", {"foo": "bar"}, '{"foo":"baz"}', "fail"),
    row(EQUALS, "equals", {"a": 1}, '{"a":1}', "pass"),
    row(EQUALS, "not-equals", {"a": 1}, '{"a":1}', "fail"),
    row(EQUALS, "equals", {"z": 0, "a": "expected"}, '{"z":0,"a":"actual"}', "fail"),
    row(EQUALS, "equals", "hello world", "hello world", "pass"),
    row(EQUALS, "equals", "goodbye world", "hello world", "fail"),
    row(EQUALS, "not-equals", "hello world", "hello world", "fail"),
    row(EQUALS, "not-equals", "goodbye world", "hello world", "pass"),
    # YAML scalars compared as promptfoo's String(value) writes them
    row(EQUALS, "equals", 1.0, "1", "pass"),
    row(EQUALS, "equals", True, "true", "pass"),
    row(EQUALS, "equals", None, "null", "pass"),
    row(CONTAINS, "contains", 2.5e-7, "2.5e-7", "pass"),
]

LAT_LONG = {
    "required": ["latitude", "longitude"],
    "type": "object",
    "properties": {
        "latitude": {"type": "number", "minimum": -90, "maximum": 90},
        "longitude": {"type": "number", "minimum": -180, "maximum": 180},
    },
}
LAT_LONG_YAML = """
required: [latitude, longitude]
type: object
properties:
  latitude: {type: number, minimum: -90, maximum: 90}
  longitude: {type: number, minimum: -180, maximum: 180}
"""


def formatted(name: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"field": {"type": "string", "format": name}},
        "required": ["field"],
    }


def field_of(text: str) -> str:
    return json.dumps({"field": text})


SCHEMA_ROWS: list[Row] = [
    row(IS_JSON, "is-json", LAT_LONG, '{"latitude": 80.123, "longitude": -1}', "pass"),
    row(
        IS_JSON,
        "is-json",
        LAT_LONG,
        '{"latitude": "high", "longitude": [-1]}',
        "fail",
        reason_has="`latitude`",
    ),
    row(IS_JSON, "is-json", LAT_LONG_YAML, '{"latitude": 80.123, "longitude": -1}', "pass"),
    row(IS_JSON, "is-json", LAT_LONG_YAML, '{"latitude": "high", "longitude": [-1]}', "fail"),
    row(IS_JSON, "is-json", formatted("date"), '{"field": "2021-08-29"}', "pass"),
    row(
        IS_JSON, "is-json", formatted("date"), '{"field": "not a date"}', "fail", reason_has="date"
    ),
    row(
        IS_JSON,
        "is-json",
        "file:///schema.json",
        '{"latitude": 80.123, "longitude": -1}',
        "invalid",
        reason_has="file://",
        on_purpose=(
            "promptfoo reads the schema from the file; Seatrial keeps a case self-contained "
            "and asks for the schema inline, so the stored case says what was checked"
        ),
    ),
    # The formats ajv-formats checks, each both ways (the issue names date and email).
    row(FORMATS, "is-json", formatted("date"), field_of("2021-02-29"), "fail"),
    row(FORMATS, "is-json", formatted("email"), field_of("user@example.com"), "pass"),
    row(FORMATS, "is-json", formatted("email"), field_of("not-an-email"), "fail"),
    row(FORMATS, "is-json", formatted("email"), field_of("user@localhost"), "fail"),
    row(FORMATS, "is-json", formatted("date-time"), field_of("2024-05-11T09:30:00+08:00"), "pass"),
    row(FORMATS, "is-json", formatted("date-time"), field_of("2024-05-11 09:30"), "fail"),
    row(FORMATS, "is-json", formatted("time"), field_of("09:30:00Z"), "pass"),
    row(FORMATS, "is-json", formatted("time"), field_of("25:00:00Z"), "fail"),
    row(FORMATS, "is-json", formatted("uri"), field_of("https://example.com/a?b=1#c"), "pass"),
    row(FORMATS, "is-json", formatted("uri"), field_of("example.com/no-scheme"), "fail"),
    row(FORMATS, "is-json", formatted("uri-reference"), field_of("../orders/A123"), "pass"),
    row(FORMATS, "is-json", formatted("url"), field_of("https://shop.example.cn/o/1"), "pass"),
    row(FORMATS, "is-json", formatted("url"), field_of("ftp//broken"), "fail"),
    row(FORMATS, "is-json", formatted("hostname"), field_of("api.example.com"), "pass"),
    row(FORMATS, "is-json", formatted("hostname"), field_of("-bad-.example"), "fail"),
    row(FORMATS, "is-json", formatted("ipv4"), field_of("192.168.1.1"), "pass"),
    row(FORMATS, "is-json", formatted("ipv4"), field_of("300.1.1.1"), "fail"),
    row(FORMATS, "is-json", formatted("ipv6"), field_of("2001:db8::1"), "pass"),
    row(
        FORMATS,
        "is-json",
        formatted("uuid"),
        field_of("123e4567-e89b-12d3-a456-426614174000"),
        "pass",
    ),
    row(FORMATS, "is-json", formatted("uuid"), field_of("123e4567"), "fail"),
    row(FORMATS, "is-json", formatted("duration"), field_of("P1DT2H"), "pass"),
    row(FORMATS, "is-json", formatted("duration"), field_of("P1DT"), "fail"),
    row(FORMATS, "is-json", formatted("regex"), field_of("^A\\d+$"), "pass"),
    row(FORMATS, "is-json", formatted("regex"), field_of("(unclosed"), "fail"),
    row(FORMATS, "is-json", formatted("json-pointer"), field_of("/orders/0"), "pass"),
    row(FORMATS, "is-json", formatted("json-pointer"), field_of("orders/0"), "fail"),
    row(
        FORMATS,
        "is-json",
        formatted("no-such-format"),
        field_of("anything"),
        "invalid",
        reason_has="cannot check",
    ),
]

SCHEMA_SPELLINGS = ["is-json", "is_json", "json-schema", "json_schema"]


def outcome(kind: str, params: dict[str, Any], output: str) -> tuple[str, str]:
    """``(verdict, reason)`` of one assertion evaluated the way a run does; invalid if it
    cannot be loaded."""
    case = Case(id="ported", input="hi", assertions=[AssertionSpec(type=kind, **params)])
    try:
        evaluation = evaluate(case, context(case=case, response=output))
    except SuiteError as exc:
        return "invalid", str(exc)
    [result] = evaluation.results
    assert evaluation.verdict == {"pass": "PASS", "fail": "FAIL"}.get(result.verdict, "WARNING")
    return result.verdict, result.reason


def label(item: Row) -> str:
    return f"{item.type}:{item.params.get('value', '')!r}->{item.output!r}"[:90]


@pytest.mark.parametrize("item", TEXT_ROWS, ids=label)
def test_text_assertions_give_promptfoos_verdicts(item: Row) -> None:
    verdict, reason = outcome(item.type, item.params, item.output)

    assert verdict == item.expect, reason
    if item.reason_has is not None:
        assert item.reason_has in reason


@pytest.mark.parametrize("spelling", SCHEMA_SPELLINGS)
@pytest.mark.parametrize("item", SCHEMA_ROWS, ids=label)
def test_schemas_and_their_formats_give_promptfoos_verdicts(item: Row, spelling: str) -> None:
    verdict, reason = outcome(spelling, item.params, item.output)

    assert verdict == item.expect, reason
    if item.reason_has is not None:
        assert item.reason_has in reason


@pytest.mark.parametrize(
    ("output", "expect"),
    [('{"key":"value"}', "pass"), ("Not valid JSON", "fail"), ("", "fail")],
)
def test_is_json_without_a_schema_only_asks_for_json(output: str, expect: str) -> None:
    assert outcome("is-json", {}, output)[0] == expect
    assert outcome("is-json", {"value": ""}, output)[0] == expect  # empty: no schema


def test_every_promptfoo_spelling_seatrial_accepts_has_ported_cases() -> None:
    covered = {item.type for item in TEXT_ROWS + JUDGE_ROWS} | set(SCHEMA_SPELLINGS)
    covered.add("similar")  # its own tests below
    promptfoo_spellings = {name for name in aliases() if "-" in name}
    shared_names = {"contains", "icontains", "equals", "regex", "similar", "factuality"}
    missing = (promptfoo_spellings | shared_names) - covered
    assert not missing, f"port promptfoo's cases for {sorted(missing)}"
    for name in promptfoo_spellings | shared_names:
        lookup(name)  # each one is accepted


@pytest.mark.parametrize(
    "name", ["not-similar", "not-contains-any", "not-is-json", "not-starts-with", "similar:dot"]
)
def test_promptfoo_names_seatrial_does_not_accept_are_load_errors_not_silent_passes(
    name: str,
) -> None:
    verdict, reason = outcome(name, {"value": "x"}, "x")

    assert verdict == "invalid"
    assert f"unknown assertion type `{name}`" in reason


def test_a_broken_csv_value_is_reported_at_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "cases:\n"
        "  - id: refund\n"
        "    input: 我要退款\n"
        "    assertions:\n"
        "      - type: contains-any\n"
        "        value: '\"已退款, 退款成功'\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)

    [problem] = caught.value.problems
    assert problem.path.endswith("suite.yaml") and problem.line == 6
    assert "never closed" in problem.message
    assert "YAML list" in problem.message + problem.fix


# -- similar: the bundled embedding model, no judge ------------------------------------------


@pytest.mark.parametrize(
    ("params", "output", "expect"),
    [
        ({"value": "hello world"}, "hello world", "pass"),
        ({"value": ["hello world", "hi world"]}, "hello world", "pass"),
        ({"value": "hello world", "threshold": 0.5}, "hello world", "pass"),
        (
            {"value": ["hello world", "hi world"], "threshold": 0.9},
            "completely different",
            "fail",
        ),
        ({"value": 123}, "test", "invalid"),
    ],
)
def test_similar_follows_promptfoos_cases(params: dict[str, Any], output: str, expect: str):
    verdict, reason = outcome("similar", params, output)

    assert verdict == expect, reason


def test_similar_passes_at_promptfoos_default_threshold_of_0_75() -> None:
    assert lookup("similar").params.model_fields["threshold"].default == 0.75
    verdict, reason = outcome("similar", {"value": "hello world"}, "hello world")
    assert verdict == "pass" and "at least 0.75" in reason


def test_similar_with_a_list_names_the_closest_expected_text() -> None:
    verdict, reason = outcome("similar", {"value": ["goodbye moon", "hello world"]}, "hello world")

    assert verdict == "pass"
    assert "expected text 2" in reason


# -- llm-rubric and factuality: a scripted judge ---------------------------------------------


@dataclass(frozen=True)
class JudgeRow:
    """A promptfoo model-graded case: what the judge answers and the verdict that follows."""

    source: str
    type: str
    params: dict[str, Any]
    judge_answer: str
    expect: Literal["pass", "fail", "not_evaluated"]
    calibrated: bool = True
    on_purpose: str | None = None
    attempt: str | None = None
    """The attempt's verdict when it is not simply the assertion's (PASS or FAIL)."""
    reason_has: list[str] = field(default_factory=list)


def judged_as(verdict: str, confidence: float = 0.9, **extra: Any) -> str:
    return json.dumps({"verdict": verdict, "confidence": confidence, "reason": "r", **extra})


def claims(*statuses: str) -> str:
    return json.dumps(
        {"claims": [{"claim": f"claim {n}", "status": s} for n, s in enumerate(statuses)]}
    )


RUBRIC = {"value": "Check if output correctly answers the question about capital cities."}
REFERENCE = {"value": "Paris is the capital of France."}

JUDGE_ROWS: list[JudgeRow] = [
    JudgeRow(LLM_RUBRIC, "llm-rubric", RUBRIC, judged_as("PASS"), "pass"),
    JudgeRow(LLM_RUBRIC, "llm-rubric", RUBRIC, judged_as("FAIL"), "fail"),
    JudgeRow(
        LLM_RUBRIC,
        "llm-rubric",
        {"value": "Evaluate the quality of this answer.", "threshold": 0.7},
        judged_as("PASS", dimension_scores={"quality": 0.6}),
        "fail",
        reason_has=["score 0.60, threshold 0.7"],
    ),
    JudgeRow(
        LLM_RUBRIC,
        "llm-rubric",
        {**RUBRIC, "must_pass": True},
        "This is not valid JSON",
        "not_evaluated",
        attempt="WARNING",
        reason_has=["judge_error"],
        on_purpose=(
            "promptfoo fails the test when the grader's answer cannot be parsed; Seatrial "
            "records the assertion as not evaluated (WARNING): the agent did not fail, the "
            "judge did, and it never counts as a pass"
        ),
    ),
    JudgeRow(
        LLM_RUBRIC,
        "llm-rubric",
        RUBRIC,
        judged_as("FAIL"),
        "not_evaluated",
        attempt="WARNING",
        calibrated=False,
        reason_has=["advisory FAIL"],
        on_purpose=(
            "promptfoo fails on any grader FAIL; Seatrial lets a judge fail an attempt only "
            "once it is calibrated against human labels, and sends the rest to review"
        ),
    ),
    JudgeRow(FACTUALITY, "factuality", REFERENCE, claims("supported"), "pass"),
    JudgeRow(FACTUALITY, "factuality", REFERENCE, claims("supported", "supported"), "pass"),
    JudgeRow(
        FACTUALITY,
        "factuality",
        REFERENCE,
        claims("supported", "contradicted"),
        "fail",
        reason_has=["claim 1 (contradicted)"],
    ),
    JudgeRow(
        FACTUALITY,
        "factuality",
        REFERENCE,
        claims("supported", "not_in_reference"),
        "fail",
        on_purpose=(
            "promptfoo passes a reply that is a consistent superset of the reference "
            "(category B); Seatrial fails a claim the reference does not back, since an agent "
            "stating unbacked facts is what it must catch; `threshold` below 1 allows them"
        ),
    ),
    JudgeRow(
        FACTUALITY,
        "factuality",
        {**REFERENCE, "threshold": 0.5},
        claims("supported", "not_in_reference"),
        "pass",
    ),
    JudgeRow(
        FACTUALITY,
        "factuality",
        {**REFERENCE, "must_pass": True},
        "I am not able to grade this submission.",
        "not_evaluated",
        attempt="WARNING",
        reason_has=["judge_error"],
        on_purpose=(
            "promptfoo fails with a grader error; Seatrial records not evaluated (WARNING), "
            "never a pass and never blamed on the agent"
        ),
    ),
]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def gateway(server: FakeOpenAI) -> AsyncIterator[Gateway]:
    opened = Gateway(
        GatewayConfig(models={"judge": model_for(server, name="judge", model="gpt-4o-2024-08-06")})
    )
    yield opened
    await opened.aclose()


def judge_runtime(gateway: Gateway, *, calibrated: bool) -> JudgeRuntime:
    judge = Judge(gateway, JudgeSettings(model="judge", max_retries=1))
    history = [
        Calibration(
            judge_model="judge",
            prompt_hash=judge.prompt_hash,
            created_at=time.time(),
            items=200,
            agreement=0.95,
            kappa=None,
            base_rate=0.5,
        )
    ]
    trust = judge_trust(
        judge.model,
        judge.prompt_version,
        judge.prompt_hash,
        history if calibrated else [],
        judge.settings,
    )
    return JudgeRuntime(judge, trust, None)


@pytest.mark.parametrize(
    "item", JUDGE_ROWS, ids=lambda r: f"{r.type}-{r.expect}-{r.judge_answer}"[:80]
)
async def test_model_graded_assertions_turn_the_judges_answer_into_promptfoos_verdict(
    item: JudgeRow, server: FakeOpenAI, gateway: Gateway
) -> None:
    server.script = item.judge_answer
    case = Case(
        id="capital",
        input="What is the capital of France?",
        assertions=[AssertionSpec(type=item.type, **item.params)],
    )
    trace = TraceBuilder().trace()
    reply = "The capital of France is Paris."
    ctx = AssertionContext(case=case, trace=trace, response=reply, responses=[reply])
    ctx.judge = judge_runtime(gateway, calibrated=item.calibrated).for_attempt(
        "run-1", case.id, 1, trace
    )

    evaluation = await evaluate_async(case, ctx)

    [result] = evaluation.results
    assert result.verdict == item.expect, result.reason
    for text in item.reason_has:
        assert text in result.reason
    assert evaluation.verdict == (item.attempt or item.expect.upper())


def test_every_on_purpose_difference_is_explained_in_the_docs() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cases.md").read_text("utf-8")
    section = docs.split("## promptfoo compatibility", 1)[1].split("\n## ", 1)[0]
    differing = [r for r in TEXT_ROWS + SCHEMA_ROWS if r.on_purpose] + [
        r for r in JUDGE_ROWS if r.on_purpose
    ]
    assert len(differing) == 6
    for needle in ("names no text", "file://", "not evaluated", "calibrated", "superset"):
        assert needle in section, f"docs/cases.md's promptfoo section should explain {needle!r}"
