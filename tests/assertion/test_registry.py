"""Importing seatrial.assertion registers every built-in type, each with a params model."""

from __future__ import annotations

import pytest

import seatrial.assertion as assertion
from seatrial.assertion import AssertionParams, aliases, known_types, lookup
from seatrial.record import FAILURE_TYPES
from seatrial.registry import field_docs

BUILT_IN = {
    "tool_called": "L1",
    "tool_not_called": "L1",
    "tool_params": "L1",
    "tool_sequence": "L1",
    "tool_success": "L1",
    "forbidden_events": "L1",
    "limits": "L1",
    "no_loop": "L1",
    "permissions_respected": "L1",
    "side_effect": "L1",
    "expected_files": "L1",
    "skill_routed": "L1",
    "trace_complete": "L1",
    "contains": "L2",
    "not_contains": "L2",
    "icontains": "L2",
    "contains_any": "L2",
    "contains_all": "L2",
    "equals": "L2",
    "starts_with": "L2",
    "regex": "L2",
    "not_regex": "L2",
    "is_json": "L2",
    "json_schema": "L2",
    "length": "L2",
    "business_rule": "L2",
    "similar": "L3",
    "llm_judge": "L3",
    "factuality": "L3",
}


def test_every_built_in_type_is_registered_at_its_level():
    assert set(BUILT_IN) <= set(known_types())
    for name, level in BUILT_IN.items():
        kind = lookup(name)
        assert kind.level == level, name
        assert issubclass(kind.params, AssertionParams)
        assert kind.failure_type in FAILURE_TYPES, name
        assert kind.doc, f"{name} has no docstring for the docs"


def test_every_params_field_is_documented():
    for name in BUILT_IN:
        params = lookup(name).params
        documented = field_docs(params)
        for field_name in params.model_fields:
            assert documented.get(field_name), f"{name}.{field_name} has no docstring"


def test_params_never_reuse_the_common_keys():
    common = {"type", "id", "level", "weight", "must_pass"}
    for name in BUILT_IN:
        assert not common & set(lookup(name).params.model_fields), name


def test_aliases_point_at_registered_types():
    for alias, canonical in aliases().items():
        assert canonical in known_types()
        assert lookup(alias) is lookup(canonical)
    assert aliases()["final_state"] == "side_effect"


def test_unknown_type_is_a_key_error():
    with pytest.raises(KeyError):
        lookup("tool_caled")


def test_public_names_are_sorted_and_resolve():
    assert assertion.__all__ == sorted(assertion.__all__)
    assert assertion.__all__ == [
        "AssertionContext",
        "AssertionParams",
        "AssertionType",
        "Check",
        "Evaluation",
        "JudgeHandle",
        "Planned",
        "Recovery",
        "ReviewRequest",
        "aliases",
        "assertion",
        "evaluate",
        "evaluate_async",
        "known_types",
        "lookup",
        "plan",
        "recoveries",
    ]
    for name in assertion.__all__:
        assert getattr(assertion, name) is not None


def test_context_tool_calls_follow_a_replaced_trace():
    from ._traces import TraceBuilder, context

    first = TraceBuilder()
    first.tool("a")
    ctx = context(first.trace())
    assert [call.name for call in ctx.tool_calls()] == ["a"]
    second = TraceBuilder()
    second.tool("b")
    ctx.trace = second.trace()
    assert [call.name for call in ctx.tool_calls()] == ["b"]


class _ReplyLanguageParams(AssertionParams):
    expected: str
    """ISO code of the language the reply must be in."""


def test_a_plugin_type_is_accepted_by_the_suite_loader_with_its_parameters_checked(
    monkeypatch, tmp_path
):
    from seatrial.assertion import Check, assertion
    from seatrial.case import load_suite
    from seatrial.errors import SuiteError
    from seatrial.registry import _assertions as table

    monkeypatch.setattr(table, "_TYPES", dict(table._TYPES))
    monkeypatch.setattr(table, "_ALIASES", dict(table._ALIASES))

    @assertion("reply_language", level="L2", params=_ReplyLanguageParams, failure_type="format")
    def reply_language(params: _ReplyLanguageParams, ctx) -> Check:
        """The reply is in the expected language."""
        return Check.passed()

    good = tmp_path / "good.yaml"
    good.write_text(
        "cases:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: reply_language, expected: zh}\n",
        encoding="utf-8",
    )
    assert load_suite(good).cases[0].assertions[0].type == "reply_language"
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "cases:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: reply_language, expectd: zh}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(bad)
    assert "assertion `reply_language`: unknown parameter `expectd`" in str(caught.value)


def test_the_assertion_package_and_the_registry_leaf_share_one_table():
    import seatrial.registry as leaf

    assert assertion.AssertionParams is leaf.AssertionParams
    assert assertion.AssertionType is leaf.AssertionType
    assert leaf.lookup("tool_called") is lookup("tool_called")
    assert leaf.known_types() == known_types()
