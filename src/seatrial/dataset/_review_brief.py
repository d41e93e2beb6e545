"""What the judge was asked for a review item, read back from the run that queued it.

The review queue keeps the judge's verdict and reason, not the criteria it was given; the run's
stored cases and settings still hold them. The dashboard shows them beside the verdict, so a
reviewer labels against the same standard the judge read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from seatrial.assertion import plan
from seatrial.errors import SeatrialError
from seatrial.store import ReviewItem, Store


class JudgeBrief(BaseModel):
    """What the judge was given for a review item, read back from the run that queued it."""

    assertion_type: str
    """The registered type, e.g. ``llm_judge`` (the case may have used an alias)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The assertion's parameters as the case wrote them (criteria, reference, threshold ...)."""
    rubric: str | None = None
    """The rubric the judge read: the assertion's own, else the suite's for the category."""


def judge_brief(store: Store, item: ReviewItem) -> JudgeBrief | None:
    """The criteria behind ``item``'s judge verdict, or None when its run no longer says
    (the run or the case was deleted, or the assertion id no longer plans)."""
    try:
        info = store.get_run(item.run_id)
        cases = {case.id: case for case in store.run_cases(item.run_id)}
        planned = {p.id: p for p in plan(cases[item.case_id])}[item.assertion_id]
    except (KeyError, SeatrialError):
        return None
    params = planned.params.model_dump(mode="json", exclude_defaults=True)
    own = params.get("rubric")
    suite = info.settings.rubrics.get(item.category) if item.category else None
    rubric = own if isinstance(own, str) else suite if isinstance(suite, str) else None
    return JudgeBrief(assertion_type=planned.type.name, params=params, rubric=rubric)
