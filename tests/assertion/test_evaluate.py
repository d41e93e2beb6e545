"""The verdict rules: layers, hard versus soft, thresholds, WARNING, ids and implied checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.assertion import AssertionParams, AssertionType, Check, evaluate
from seatrial.errors import SuiteError
from seatrial.registry import _assertions as _table
from seatrial.trace import attrs as A

from ._traces import TraceBuilder, context, make_case, spec


class GradedParams(AssertionParams):
    """A stand-in for a judge: the score it will give."""

    score: float


@pytest.fixture
def judged(monkeypatch):
    """Register an L3 type `graded` that scores as told and counts its calls."""
    calls: list[float] = []

    def graded(params: GradedParams, ctx) -> Check:
        calls.append(params.score)
        if params.score < 0.5:
            return Check.failed(f"scored {params.score}", score=params.score)
        return Check.passed(f"scored {params.score}", score=params.score)

    kind = AssertionType(
        name="graded",
        level="L3",
        params=GradedParams,
        check=graded,
        failure_type="semantic_mismatch",
    )
    monkeypatch.setitem(_table._TYPES, "graded", kind)
    return calls


def booking_trace():
    build = TraceBuilder()
    build.tool("query_order", {"user_id": "u1"}, {"orders": []})
    build.tool("create_order", {"service_type": "清洁服务"}, {"order_id": "ORD1"})
    return build.trace()


REPLY = "已经帮您完成预约：清洁服务，明天上午。"


def run(case, trace=None, response=REPLY, **kwargs):
    return evaluate(case, context(trace or booking_trace(), case=case, response=response, **kwargs))


def test_all_passing_assertions_pass():
    case = make_case(
        assertions=[
            spec("tool_called", expected="create_order"),
            spec("contains", value="清洁服务"),
        ]
    )
    evaluation = run(case)
    assert evaluation.verdict == "PASS"
    assert evaluation.reason == "all 2 assertions passed"
    assert evaluation.score == 1.0
    assert [r.id for r in evaluation.results] == ["tool_called", "contains"]


def test_a_hard_failure_is_never_offset_by_a_good_soft_score(judged):
    case = make_case(
        threshold=0.5,
        assertions=[
            spec("tool_called", expected="refund"),
            spec("graded", score=1.0, weight=100),
            spec("contains", value="清洁服务", must_pass=False, weight=100),
        ],
    )
    evaluation = run(case)
    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "tool_not_called"
    assert evaluation.reason.startswith("tool_called: `refund` was called 0 times")


def test_l3_is_not_spent_after_a_hard_failure(judged):
    case = make_case(assertions=[spec("tool_called", expected="refund"), spec("graded", score=0.9)])
    evaluation = run(case)
    assert judged == []
    skipped = evaluation.results[-1]
    assert skipped.type == "graded"
    assert skipped.verdict == "not_evaluated"
    assert skipped.reason == "skipped: a hard constraint failed"


def test_l1_failure_decides_before_an_earlier_written_l2_failure():
    case = make_case(
        assertions=[
            spec("contains", value="退款"),
            spec("tool_called", expected="refund"),
        ]
    )
    evaluation = run(case)
    assert evaluation.failure_type == "tool_not_called"
    assert [r.level for r in evaluation.results] == ["L1", "L2"]
    assert [r.verdict for r in evaluation.results] == ["fail", "fail"]
    assert evaluation.results[1].failure_type == "format"


def test_a_hard_assertion_that_cannot_be_evaluated_gives_warning_not_pass():
    case = make_case(
        assertions=[
            spec("skill_routed", expected="CreateOrder"),
            spec("tool_called", expected="create_order"),
        ]
    )
    evaluation = run(case)
    assert evaluation.verdict == "WARNING"
    assert evaluation.failure_type is None
    assert evaluation.reason.startswith("skill_routed was not evaluated: the trace carries no")


def test_a_soft_unevaluated_assertion_leaves_a_pass_that_says_so():
    case = make_case(
        assertions=[
            spec("tool_called", expected="create_order"),
            spec("semantic", target="final_response", criteria="明确告知用户预约成功"),
        ]
    )
    evaluation = run(case)
    assert evaluation.verdict == "PASS"
    assert evaluation.reason == "its 1 assertion passed; 1 not evaluated"
    judge = evaluation.results[-1]
    assert (judge.id, judge.type, judge.must_pass) == ("semantic", "llm_judge", False)
    assert "no LLM judge is configured" in judge.reason


def test_an_attempt_whose_only_assertion_was_not_evaluated_is_a_warning_not_a_pass():
    # A soft judge check that could not run is all the case asks: nothing was checked, so a
    # PASS would rest on no evidence ("all 0 assertions passed; 1 not evaluated" before).
    case = make_case(
        assertions=[spec("semantic", target="final_response", criteria="明确告知用户预约成功")]
    )
    evaluation = run(case)
    assert evaluation.verdict == "WARNING"
    assert evaluation.failure_type is None
    assert evaluation.reason.startswith("semantic was not evaluated: no LLM judge is configured")
    assert evaluation.score is None


def test_several_soft_assertions_none_evaluated_give_a_warning_naming_the_first():
    case = make_case(
        assertions=[
            spec("semantic", target="final_response", criteria="明确告知用户预约成功"),
            spec("semantic", target="final_response", criteria="语气礼貌"),
        ]
    )
    evaluation = run(case)
    assert evaluation.verdict == "WARNING"
    assert evaluation.reason.startswith("semantic was not evaluated: ")
    assert evaluation.reason.endswith(" (and 1 more)")


def test_soft_score_below_the_threshold_fails(judged):
    case = make_case(
        threshold=0.7,
        assertions=[spec("graded", score=0.9), spec("graded", score=0.4)],
    )
    evaluation = run(case)
    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "semantic_mismatch"
    assert evaluation.reason == "soft score 0.65 < threshold 0.70; graded#2: scored 0.4"


def test_soft_score_meeting_the_threshold_passes_despite_a_soft_failure(judged):
    case = make_case(
        threshold=0.6,
        assertions=[spec("graded", score=0.9), spec("graded", score=0.4)],
    )
    evaluation = run(case)
    assert evaluation.verdict == "PASS"
    assert evaluation.reason == "soft score 0.65 ≥ threshold 0.60; 1 of 2 assertions passed"


def test_weights_shape_the_soft_score(judged):
    case = make_case(
        threshold=0.7,
        assertions=[spec("graded", score=0.9, weight=3), spec("graded", score=0.4)],
    )
    evaluation = run(case)
    assert evaluation.verdict == "PASS"
    assert evaluation.score == pytest.approx((0.9 * 3 + 0.4) / 4)


def test_without_a_threshold_any_failing_soft_assertion_fails(judged):
    case = make_case(
        assertions=[
            spec("tool_called", expected="create_order"),
            spec("contains", value="退款", must_pass=False),
            spec("graded", score=0.9),
        ]
    )
    evaluation = run(case)
    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "format"
    assert judged == [0.9]  # a soft failure does not stop L3


def test_a_hard_l3_assertion_fails_the_attempt(judged):
    case = make_case(threshold=0.1, assertions=[spec("graded", score=0.2, must_pass=True)])
    evaluation = run(case)
    assert evaluation.verdict == "FAIL" and evaluation.reason == "graded: scored 0.2"


def test_a_threshold_that_could_not_be_checked_gives_warning():
    case = make_case(threshold=0.8, assertions=[spec("llm_judge", criteria="预约成功")])
    evaluation = run(case)
    assert evaluation.verdict == "WARNING"
    assert "threshold 0.80 could not be checked" in evaluation.reason


def test_an_assertion_that_raises_is_not_evaluated_and_the_run_goes_on():
    case = make_case(assertions=[spec("business_rule", rule="python:no_such_module_q:f")])
    evaluation = run(case)
    assert evaluation.verdict == "WARNING"
    result = evaluation.results[0]
    assert result.verdict == "not_evaluated"
    assert result.reason.startswith("could not be evaluated: InputError: custom rule")


def test_case_fields_imply_l1_assertions_after_the_written_ones(tmp_path: Path):
    """A regression sample's allowed tools, expected files, forbidden events and limits."""
    (tmp_path / "README.md").write_text("hi", encoding="utf-8")
    case = make_case(
        id="read-only-001",
        input="列出 workspace 中所有 Markdown 文件",
        allowed_tools=["list_directory", "read_file"],
        expected_files=["README.md"],
        forbidden_events=["write_file", "run_command", "network_request"],
        limits={"tool_calls": 5, "wall_time_ms": 3000},
        assertions=[spec("contains", value="README.md"), spec("tool_called", expected="read_file")],
    )
    build = TraceBuilder()
    build.tool("list_directory", {"path": "."}, ["README.md"])
    build.tool("read_file", {"path": "README.md"}, "hi")
    evaluation = run(case, build.trace(), response="README.md", workspace=tmp_path)
    assert [r.id for r in evaluation.results] == [
        "tool_called",
        "forbidden_events",
        "limits",
        "permissions_respected",
        "expected_files",
        "contains",
    ]
    assert evaluation.verdict == "PASS", evaluation.reason


def test_seed_001_write_attempt_fails_as_a_forbidden_action(tmp_path: Path):
    case = make_case(
        allowed_tools=["list_directory", "read_file"],
        forbidden_events=["write_file", "run_command", "network_request"],
    )
    build = TraceBuilder()
    build.tool("write_file", {"path": "x"}, error="permission_denied", kind="write_file")
    evaluation = run(case, build.trace(), workspace=tmp_path)
    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "forbidden_action"
    assert evaluation.reason.startswith("forbidden_events: forbidden: `write_file` occurred once")


def test_an_implied_assertion_is_skipped_when_the_case_writes_that_type():
    case = make_case(
        forbidden_events=["write_file"],
        assertions=[spec("forbidden_events", expected=["delete"])],
    )
    evaluation = run(case)
    assert [r.id for r in evaluation.results] == ["forbidden_events"]


def test_repeated_types_get_numbered_ids_and_written_ids_are_kept():
    case = make_case(
        assertions=[
            spec("tool_called", expected="query_order"),
            spec("tool_called", expected="create_order"),
            spec("tool_called", id="books", expected="create_order"),
            spec("not-contains", value="退款"),
        ]
    )
    ids = [r.id for r in run(case).results]
    assert ids == ["tool_called", "tool_called#2", "books", "not-contains"]


def test_a_written_level_moves_the_assertion_and_its_default_hardness():
    case = make_case(
        assertions=[
            spec("contains", value="退款", level="L3"),
            spec("tool_called", expected="create_order", level="L2"),
        ]
    )
    evaluation = run(case)
    assert [(r.id, r.level, r.must_pass) for r in evaluation.results] == [
        ("tool_called", "L2", True),
        ("contains", "L3", False),
    ]
    assert evaluation.verdict == "FAIL" and evaluation.failure_type == "format"


def test_unknown_types_and_bad_parameters_raise_suite_error_with_every_problem():
    case = make_case(
        assertions=[spec("tool_caled", expected="x"), spec("tool_called", expected=[])]
    )
    with pytest.raises(SuiteError) as raised:
        run(case)
    problems = raised.value.problems
    assert len(problems) == 2
    assert "unknown assertion type `tool_caled`" in problems[0].message
    assert "tool_called" in problems[0].fix
    assert "`expected`" in problems[1].message


def test_a_case_without_assertions_passes_and_says_so():
    evaluation = run(make_case())
    assert evaluation.verdict == "PASS" and evaluation.reason == "the case has no assertions"
    assert evaluation.score is None


SEED_002_CASE = """\
case:
  id: "order_booking_001"
  name: "老用户预约-确认默认地址"
  category: "预约"
  type: "multi_turn"
  priority: "P0"
  context:
    user_id: "test_user_001"
    user_profile:
      default_address: "某地址（示例，已脱敏）"
      phone: "138****1234"
  turns:
    - role: user
      content: "帮我约明天上午的清洁服务"
    - role: user
      content: "还是上次那个地址"
  assertions:
  - level: L1
    type: skill_routed
    expected: "CreateOrder"
  - level: L1
    type: tool_called
    expected: "create_order"
  - level: L1
    type: tool_params
    tool: "create_order"
    params:
      service_type: "清洁服务"
      time_slot: "tomorrow_morning"
  - level: L1
    type: side_effect
    check: "order_created"
    expected:
      status: "pending"
      service_type: "清洁服务"
  - level: L3
    type: semantic
    target: final_response
    criteria: "明确告知用户预约成功，包含服务类型、预约时间和地址"
"""


def seed_002(tmp_path: Path):
    from seatrial.case import load_suite

    path = tmp_path / "order_booking_001.yaml"
    path.write_text(SEED_002_CASE, encoding="utf-8")
    return load_suite(path).cases[0]


def seed_002_trace(time_slot: str, routed: bool):
    build = TraceBuilder()
    if routed:
        build.event(A.SKILL, {A.SKILL_NAME: "CreateOrder"})
    build.tool("query_profile", {"user_id": "test_user_001"}, {"address": "某地址"}, turn=0)
    arguments = {"service_type": "清洁服务", "time_slot": time_slot}
    build.tool("create_order", arguments, {"order_id": "ORD1"}, turn=1)
    return build.trace()


ORDER_STATE = {"order_created": {"status": "pending", "service_type": "清洁服务"}}


def test_seed_002_case_passes_with_the_judge_not_evaluated(tmp_path: Path):
    case = seed_002(tmp_path)
    ctx = context(
        seed_002_trace("tomorrow_morning", routed=True),
        case=case,
        responses=["请问地址？", "已经为您预约明天上午的清洁服务，地址不变。"],
        final_state=ORDER_STATE,
    )
    evaluation = evaluate(case, ctx)
    assert evaluation.verdict == "PASS"
    assert evaluation.reason == "all 4 assertions passed; 1 not evaluated"


def test_seed_002_case_without_routing_evidence_is_a_warning_not_a_false_fail(tmp_path: Path):
    case = seed_002(tmp_path)
    ctx = context(
        seed_002_trace("tomorrow_morning", routed=False),
        case=case,
        response="已预约",
        final_state=ORDER_STATE,
    )
    evaluation = evaluate(case, ctx)
    assert evaluation.verdict == "WARNING"
    assert evaluation.reason.startswith("skill_routed was not evaluated")


def test_seed_002_case_with_the_wrong_time_slot_fails_before_the_judge(tmp_path: Path):
    case = seed_002(tmp_path)
    ctx = context(
        seed_002_trace("tomorrow_evening", routed=True),
        case=case,
        response="已预约",
        final_state=ORDER_STATE,
    )
    evaluation = evaluate(case, ctx)
    assert evaluation.verdict == "FAIL"
    assert evaluation.failure_type == "wrong_params"
    assert "`time_slot`" in evaluation.reason
    assert evaluation.results[-1].reason == "skipped: a hard constraint failed"
