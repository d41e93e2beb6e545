"""A count is said with its noun in the right number, in the reports and what a run prints."""

from __future__ import annotations

import pytest

from seatrial.i18n import counted


@pytest.mark.parametrize(
    ("count", "said"), [(0, "0 cases"), (1, "1 case"), (2, "2 cases"), (11, "11 cases")]
)
def test_one_is_singular_and_every_other_count_plural(count: int, said: str) -> None:
    assert counted(count, "case") == said


def test_a_noun_whose_plural_is_not_an_s_gives_its_own() -> None:
    assert counted(1, "retry", "retries") == "1 retry"
    assert counted(2, "retry", "retries") == "2 retries"
