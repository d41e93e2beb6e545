"""The case pass rate's interval is said in plain words when it is too wide to act on."""

from __future__ import annotations

from types import SimpleNamespace

from seatrial.compare import RunStatistics, wilson_interval
from seatrial.i18n import use_language
from seatrial.report._summary import statistics_lines


def _lines(passed: int, cases: int) -> list[str]:
    stats = RunStatistics(
        pass_rate=wilson_interval(passed, cases).as_dict(),
        case_pass_rate=wilson_interval(passed, cases).as_dict(),
    )
    return statistics_lines(SimpleNamespace(statistics=stats))  # type: ignore[arg-type]


def test_few_cases_are_said_to_leave_the_rate_loose():
    # 4 of 5: the interval runs from 37.6% to 96.4%, 59 points.
    assert _lines(4, 5)[0].endswith(": too few cases to pin the rate down closer than that")
    with use_language("zh_CN"):
        assert _lines(4, 5)[0].endswith("：用例太少，通过率只能估到这个范围")


def test_enough_cases_leave_the_figure_alone():
    # 180 of 200: 85.1% to 93.4%, 8 points.
    assert _lines(180, 200)[0] == ("cases passing: 90.0% [85.1%, 93.4%] (95% Wilson interval)")
