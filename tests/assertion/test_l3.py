"""L3 assertions without a judge: recorded as not evaluated, parameters checked all the same.

`similar` needs no judge (the bundled embedding model): tests/judge/test_embedding.py.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from seatrial.assertion import lookup
from seatrial.i18n import render

from ._traces import check, context

NO_JUDGE = (
    "no LLM judge is configured; L3 assertions are evaluated once a judge is set up "
    "(see docs/judge.md)"
)


@pytest.mark.parametrize(
    ("type_name", "params"),
    [
        ("llm_judge", {"criteria": "明确告知用户预约成功", "target": "final_response"}),
        ("semantic", {"criteria": "明确告知用户预约成功"}),
        ("llm-rubric", {"value": "Is polite"}),
        ("llm_rubric", {"rubric": "预约类: 确认时间、服务类型和地址"}),
        ("factuality", {"value": "The flight leaves at 9am"}),
        ("factuality", {"reference": "航班 9 点起飞", "threshold": 0.5}),
    ],
)
def test_l3_without_a_judge_is_not_evaluated_with_the_documented_reason(type_name, params):
    result = check(type_name, context(response="已经帮您完成预约"), **params)
    assert result.verdict == "not_evaluated"
    assert result.reason == NO_JUDGE


def test_judge_aliases_resolve_to_llm_judge():
    for alias in ("semantic", "llm_rubric", "llm-rubric"):
        assert lookup(alias).name == "llm_judge"
    assert lookup("llm_judge").level == "L3"


@pytest.mark.parametrize(
    ("type_name", "params"),
    [
        ("similar", {}),
        ("similar", {"value": "x", "threshold": 1.5}),
        ("llm_judge", {"criteria": "a", "value": "b"}),
        ("llm_judge", {"criterion": "typo"}),
        ("factuality", {}),
        ("factuality", {"value": "a", "reference": "b"}),
    ],
)
def test_l3_parameters_are_checked(type_name, params):
    with pytest.raises(ValidationError):
        check(type_name, context(), **params)


def test_l3_without_a_judge_says_so_in_chinese():
    result = check("llm_judge", context(response="好的"), criteria="礼貌")
    assert render(result.message, language="zh_CN") == (
        "未配置 LLM 评审模型；配置后才会评估 L3 断言（见 docs/judge.md）"
    )


def test_a_reply_too_far_from_the_reference_reads_in_chinese_with_its_figure():
    result = check(
        "similar",
        context(response="The forecast says it will rain tomorrow."),
        value="Your refund has been issued.",
    )
    figure = f"{result.score:.3f}"
    assert result.reason == (
        f"the final reply is {figure} similar to the expected text (static), below 0.75"
    )
    assert render(result.message, language="zh_CN") == (
        f"最终回复与预期文本的相似度为 {figure}（static），低于 0.75"
    )
    assert result.span_id is None


def test_the_closest_of_several_replies_and_references_is_named_in_chinese():
    result = check(
        "similar",
        context(responses=["Which day suits you?", "Your refund has been issued."]),
        value=["The weather is fine.", "Your refund has been issued."],
        target="all_responses",
        threshold=0.9,
    )
    assert result.verdict == "pass"
    assert render(result.message, language="zh_CN").startswith(
        "第 2 条回复与第 2 条预期文本的相似度为 1.000（static），不低于 0.9"
    )


def test_an_unknown_embeddings_model_reads_in_chinese_with_the_error_as_raised():
    result = check("similar", context(response="ok"), value="ok", model="no-such-model")
    error = result.reason.removeprefix("similarity could not be computed: ")
    assert error != result.reason and "'no-such-model'" in error
    assert render(result.message, language="zh_CN") == f"无法计算相似度：{error}"
