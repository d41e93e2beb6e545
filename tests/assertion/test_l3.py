"""L3 assertions without a judge: recorded as not evaluated, parameters checked all the same.

`similar` needs no judge (the bundled embedding model): tests/judge/test_embedding.py.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from seatrial.assertion import lookup

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
